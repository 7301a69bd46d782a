import type { LedgerModule } from '../module.js';
import { annotationsModule } from './annotationsModule.js';
import { accessModule } from './accessModule.js';
import { connectorsModule } from './connectorsModule.js';
import { consoleModule } from './consoleModule.js';
import { extensionsModule } from './extensionsModule.js';
import { healthModule } from './healthModule.js';
import { jobsModule } from './jobsModule.js';
import { ledgerModule } from './ledgerModule.js';
import { protectionModule } from './protectionModule.js';
import { searchModule } from './searchModule.js';
import { settingsModule } from './settingsModule.js';

/** Every feature of the product, in the order they are wired. */
export const MODULES: readonly LedgerModule[] = [
  ledgerModule,
  searchModule,
  annotationsModule,
  extensionsModule,
  jobsModule,
  healthModule,
  connectorsModule,
  settingsModule,
  accessModule,
  consoleModule,
  protectionModule,
];
