/**
 * The one error type that crosses layers: the contract's `code`, the HTTP status and the field
 * at fault. The error middleware turns it into `{code, message, field}`; anything else becomes a
 * logged `internal_error`.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const notFound = (what = 'record') => new AppError(404, 'not_found', `The ${what} does not exist.`);
export const validationFailed = (field: string | null, message: string) => new AppError(422, 'validation_failed', message, field);
