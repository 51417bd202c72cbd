// The one error type of attnkit: a stable `code` and the `argument` at fault.

/** Error thrown for bad arguments and load failures; `code` is stable, `argument` names the culprit. */
export class AttnkitError extends Error {
  constructor(message, { code, argument, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'AttnkitError';
    this.code = code;
    if (argument !== undefined) this.argument = argument;
  }
}
