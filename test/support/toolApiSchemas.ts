import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

/** The tool API's response schemas (`/tools/*`), as JSON Schema for validating responses. */
const nullable = (type: string, format?: string) => ({ type: [type, 'null'], ...(format ? { format } : {}) });

const SCHEMAS = {
  search: {
    type: 'object',
    required: ['results'],
    additionalProperties: false,
    properties: {
      results: {
        type: 'array',
        items: {
          type: 'object',
          required: ['id', 'score', 'title', 'source', 'source_id', 'updated_at', 'snippet', 'source_url'],
          additionalProperties: false,
          properties: {
            id: { type: 'string', format: 'uuid' },
            score: { type: 'number' },
            title: nullable('string'),
            source: { type: 'string' },
            source_id: { type: 'string' },
            updated_at: { type: 'string', format: 'date-time' },
            snippet: { type: 'string' },
            source_url: nullable('string'),
          },
        },
      },
    },
  },
  get: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'source', 'source_id', 'source_url', 'title', 'author', 'created_at', 'updated_at', 'content_type', 'body', 'metadata', 'chunks'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      source: { type: 'string' },
      source_id: { type: 'string' },
      source_url: nullable('string'),
      title: nullable('string'),
      author: nullable('string'),
      created_at: { type: 'string', format: 'date-time' },
      updated_at: { type: 'string', format: 'date-time' },
      content_type: { type: 'string' },
      body: { type: 'string' },
      metadata: { type: 'object' },
      chunks: {
        type: 'array',
        items: {
          type: 'object',
          required: ['index', 'text'],
          additionalProperties: false,
          properties: { index: { type: 'integer' }, text: { type: 'string' } },
        },
      },
    },
  },
  sources: {
    type: 'object',
    required: ['sources'],
    additionalProperties: false,
    properties: {
      sources: {
        type: 'array',
        items: {
          type: 'object',
          required: ['name', 'configured', 'healthy', 'notes'],
          properties: {
            name: { type: 'string' },
            configured: { type: 'boolean' },
            healthy: { type: 'boolean' },
            notes: nullable('string'),
            doc_count: { type: 'integer' },
          },
        },
      },
    },
  },
  error: {
    type: 'object',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        additionalProperties: false,
        properties: { code: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
} as const;

const ajv = new Ajv({ allErrors: true, strict: false });
addFormats.default(ajv);

/** Throws, listing every violation, when `value` does not match the tool API's schema of that name. */
export const assertToolApiShape = (name: keyof typeof SCHEMAS, value: unknown): void => {
  const validate = ajv.compile(SCHEMAS[name]);
  if (!validate(value)) throw new Error(`${name} response breaks the tool API: ${ajv.errorsText(validate.errors)}`);
};
