import { z } from 'zod';
import { SettingsSchema } from '../../src/domain/runtimeSettings.js';
import { defineOperation, type RouteSurfaces } from '../../src/operations.js';
import type { RuntimeSettings } from '../../src/ports/runtimeSettings.js';

export const readConfigSurfaces = {
  name: 'config.read',
  tool: false,
  toolset: 'admin',
  writes: false,
  scope: 'config:read',
  input: z.object({}),
  output: SettingsSchema,
  rest: { method: 'GET', path: '/config', summary: 'Current configuration', rateClass: 'config' },
} as const satisfies RouteSurfaces;

/** The deployment's settings as recorded now, under the project's own. */
export const readConfigOperation = (settings: RuntimeSettings) =>
  defineOperation({
    ...readConfigSurfaces,
    title: 'Current configuration',
    description: "The settings in force for the project: search, indexing and rate limits.",
    run: (_input, { project }) => settings.read(project),
  });
