import { z } from 'zod';
import {
  annotationStream,
  InvalidConfigError,
  type AnnotationEvent,
  type SessionChunk,
  type SessionSource,
} from '../../src/domain/annotations.js';
import { newId } from '../../src/domain/ids.js';
import { commandContext, runCommand, unread } from '../../src/engine/commands.js';
import { ValidationError } from '../../src/errors.js';
import { defineOperation, type OperationSurfaces } from '../../src/operations.js';
import type { ChunkSource } from '../../src/ports/chunkSource.js';
import type { EventStore } from '../../src/ports/eventStore.js';
import { issuesOf, unstorableTextIssue } from '../../src/validation.js';

const ConfigChunkSchema = z.object({
  chunk_id: z.string().min(1),
  position: z.number().int().min(0),
  text: z.string(),
});

export const StartSessionInputSchema = z.object({
  config: z
    .object({
      chunks: z.array(ConfigChunkSchema).min(1).optional().describe('The chunks to annotate'),
      documentIds: z
        .array(z.string().min(1))
        .min(1)
        .optional()
        .describe('Instead of chunks: every chunk of these indexed documents'),
      query: z
        .string()
        .min(1)
        .optional()
        .describe('Instead of chunks: the indexed chunks that best match this query'),
      limit: z.number().int().min(1).max(10_000).default(100).describe('With query: how many chunks at most'),
    })
    .refine((c) => [c.chunks, c.documentIds, c.query].filter((v) => v !== undefined).length === 1, {
      message: 'give exactly one of chunks, documentIds or query',
    })
    .superRefine((c, ctx) => {
      const seen = new Set<string>();
      c.chunks?.forEach((chunk, index) => {
        if (seen.has(chunk.chunk_id)) {
          ctx.addIssue({
            code: 'custom',
            path: ['chunks', index, 'chunk_id'],
            message: `duplicate chunk_id '${chunk.chunk_id}'`,
          });
        }
        seen.add(chunk.chunk_id);
      });
    }),
  name: z.string().min(1).max(200).optional().describe('A name to recognise the session by'),
});
export type StartSessionInput = z.input<typeof StartSessionInputSchema>;

export const StartSessionOutputSchema = z.object({
  sessionId: z.uuid(),
  chunkCount: z.number().int(),
  message: z.string(),
});
export type StartSessionOutput = z.infer<typeof StartSessionOutputSchema>;

export interface StartSession {
  sessionId: string;
  name: string | null;
  source: SessionSource;
  chunks: readonly SessionChunk[];
}

/** Chunks per `SessionChunksAdded` event, bounded by count and by serialised size. */
const CHUNKS_PER_EVENT = 1_000;
const BYTES_PER_EVENT = 256 * 1024;

const packChunks = (chunks: readonly SessionChunk[]): SessionChunk[][] => {
  const packs: SessionChunk[][] = [];
  let current: SessionChunk[] = [];
  let bytes = 0;
  for (const chunk of chunks) {
    const size = Buffer.byteLength(chunk.text) + chunk.chunkId.length + 64;
    if (current.length > 0 && (current.length === CHUNKS_PER_EVENT || bytes + size > BYTES_PER_EVENT)) {
      packs.push(current);
      current = [];
      bytes = 0;
    }
    current.push(chunk);
    bytes += size;
  }
  if (current.length > 0) packs.push(current);
  return packs;
};

/** A new session: its start, then its chunks in position order. */
export const decideStartSession = (command: StartSession): AnnotationEvent[] => {
  if (command.chunks.length === 0) {
    throw new InvalidConfigError([
      { path: ['chunks'], message: 'the session has no chunks', code: 'too_small' },
    ]);
  }
  const ids = new Set(command.chunks.map((c) => c.chunkId));
  if (ids.size !== command.chunks.length) {
    throw new InvalidConfigError([{ path: ['chunks'], message: 'chunk ids must be unique', code: 'custom' }]);
  }
  const ordered = [...command.chunks].sort((a, b) => a.position - b.position);
  return [
    {
      type: 'AnnotationSessionStarted',
      schemaVersion: 1,
      data: {
        sessionId: command.sessionId,
        name: command.name,
        source: command.source,
        chunkCount: ordered.length,
      },
    },
    ...packChunks(ordered).map((chunks): AnnotationEvent => ({
      type: 'SessionChunksAdded',
      schemaVersion: 1,
      data: { sessionId: command.sessionId, chunks },
    })),
  ];
};

const chunksOf = async (
  config: z.output<typeof StartSessionInputSchema>['config'],
  chunkSource: ChunkSource | undefined,
): Promise<{ source: SessionSource; chunks: SessionChunk[] }> => {
  if (config.chunks) {
    return {
      source: { kind: 'chunks' },
      chunks: config.chunks.map((c) => ({ chunkId: c.chunk_id, position: c.position, text: c.text })),
    };
  }
  if (!chunkSource) throw new ValidationError('no document index is configured');
  if (config.documentIds) {
    return {
      source: { kind: 'documents', documentIds: config.documentIds },
      chunks: await chunkSource.chunksOfDocuments(config.documentIds),
    };
  }
  const query = config.query!;
  return {
    source: { kind: 'query', query, limit: config.limit },
    chunks: await chunkSource.chunksMatching(query, config.limit),
  };
};

export const startSessionSurfaces = {
  name: 'start_session',
  rest: { method: 'POST', path: '/annotations/sessions', summary: 'Start an annotation session', status: 201, errorFormat: 'tools' },
  cli: {
    command: ['annotations', 'start'],
    description:
      'start a session from a JSON config file ({"chunks": [{chunk_id, position, text}]}), document ids or a query',
    arguments: [
      { name: 'file', field: 'config', parse: 'json-file', optional: true, description: 'config file: {"chunks": [...]} or {"config": {"chunks": [...]}}' },
    ],
    options: [
      { flags: '--documents <ids...>', field: 'config.documentIds', description: 'every chunk of these indexed documents' },
      { flags: '--query <query>', field: 'config.query', description: 'the indexed chunks that best match this query' },
      { flags: '--limit <n>', field: 'config.limit', parse: 'number', description: 'with --query: how many chunks at most' },
      { flags: '--name <name>', field: 'name', description: 'a name for the session' },
    ],
    print: { line: 'Started session {sessionId} with {chunkCount} chunks.' },
  },
} as const satisfies OperationSurfaces;

export const startSessionOperation = (store: EventStore, chunkSource?: ChunkSource) =>
  defineOperation({
    ...startSessionSurfaces,
    title: 'Start an annotation session',
    description:
      'Initialize a new annotation session with a config file: `config.chunks` lists the chunks ' +
      '({chunk_id, position, text}); alternatively `config.documentIds` or `config.query` take them from the index.',
    toolset: 'annotations',
    writes: true,
    scope: 'index:write',
    input: StartSessionInputSchema,
    output: StartSessionOutputSchema,
    run: async (rawInput, { actor, correlationId, project }) => {
      const parsed = StartSessionInputSchema.safeParse(rawInput);
      if (!parsed.success) throw new InvalidConfigError(issuesOf(parsed.error));
      const text = unstorableTextIssue(parsed.data);
      if (text) throw new InvalidConfigError([{ path: text.path, message: text.message, code: 'invalid_text' }]);
      const { config, name } = parsed.data;
      const { source, chunks } = await chunksOf(config, chunkSource);
      const sessionId = newId();
      // Most sessions fit one append and are created atomically; a very large one takes several,
      // and counts as created once its last chunk has arrived (commands refuse it until then).
      await runCommand(
        store,
        annotationStream(sessionId),
        unread(undefined),
        () => ({ events: decideStartSession({ sessionId, name: name ?? null, source, chunks }), result: undefined }),
        commandContext(actor, { correlationId, project }),
        { batched: true },
      );
      return { sessionId, chunkCount: chunks.length, message: 'Session created successfully' };
    },
  });
