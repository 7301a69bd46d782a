export { scanFilesystem, type FilesystemScanOptions } from './filesystem.js';
export { scanGitRepository, sourceUrlFor, type GitScanOptions } from './git.js';
export {
  DEFAULT_EXCLUDES,
  DEFAULT_MAX_FILE_BYTES,
  type GitFile,
  type ScannedFile,
  type SkippedFile,
  type SkipReason,
} from './types.js';
