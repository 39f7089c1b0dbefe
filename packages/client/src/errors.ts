/**
 * An error answer of the API. `code` and `data` come from the JSON error object; an
 * answer from an intermediary (a proxy's HTML page, say) has no code, and its text is
 * the message: the format is decided by the Content-Type, as the API reference says.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
    readonly data: Record<string, unknown> | undefined,
    readonly headers: Headers,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  static async from(response: Response): Promise<ApiError> {
    const text = await response.text();
    if ((response.headers.get('content-type') ?? '').includes('application/json')) {
      try {
        const body = JSON.parse(text) as { error?: unknown; code?: unknown; data?: Record<string, unknown> };
        if (typeof body.error === 'string' && typeof body.code === 'string') {
          return new ApiError(response.status, body.code, body.error, body.data, response.headers);
        }
      } catch {
        // Not the error object after all: fall through to the text.
      }
    }
    const message = text.trim() || `HTTP ${response.status} ${response.statusText}`;
    return new ApiError(response.status, undefined, message, undefined, response.headers);
  }
}
