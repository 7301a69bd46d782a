import { AppError, UnavailableError } from '../../src/errors.js';

/** A script raised an error (or broke a limit other than time): the tool API's `tool_error`, 500. */
export class ToolError extends AppError {
  override name = 'ToolError';
  constructor(message: string, details?: Record<string, unknown>) {
    super('TOOL_ERROR', message, details);
  }
}

/** A script ran past its wall-clock timeout or its instruction budget: the tool API's `timeout`, 408. */
export class ToolTimeoutError extends AppError {
  override name = 'ToolTimeoutError';
  constructor(message: string) {
    super('TIMEOUT', message);
  }
}

/** Parameters or arguments that do not match what a tool or agent declares: the tool API's `bad_request`. */
export class BadRequestError extends AppError {
  override name = 'BadRequestError';
  constructor(message: string, details?: Record<string, unknown>) {
    super('VALIDATION_ERROR', message, details);
  }
}

/** A script file that cannot be loaded; the message names the file. */
export class ScriptLoadError extends AppError {
  override name = 'ScriptLoadError';
  constructor(
    readonly file: string,
    message: string,
  ) {
    super('INVALID_SCRIPT', `${file}: ${message}`, { file });
  }
}

/** Every Lua slot is taken and as many calls already wait for one: 503, worth retrying shortly. */
export class LuaBusyError extends UnavailableError {
  override name = 'LuaBusyError';
  constructor(running: number) {
    super(`Lua scripts are busy (${running} running, ${running} waiting); try again shortly`);
  }
}
