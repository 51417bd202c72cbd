// The one error type of attnkit: a stable `code` and the `argument` at fault.

/** Error thrown for bad arguments and load failures; `code` is stable, `argument` names the culprit. */
export class AttnkitError extends Error {
  constructor(message, { code, argument } = {}) {
    super(message);
    this.name = 'AttnkitError';
    this.code = code;
    if (argument !== undefined) this.argument = argument;
  }
}
