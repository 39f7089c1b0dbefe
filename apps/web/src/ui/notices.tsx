import { ApiError } from '@pipewright/client';

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status">
      Loading {what}…
    </p>
  );
}

/** What went wrong, in the API's words when it was the API (its message and code). */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.code ? `${error.message} (${error.code})` : error.message;
  return error instanceof Error ? error.message : String(error);
}

export function ErrorNotice({ error }: { error: unknown }) {
  return (
    <p className="error" role="alert">
      {errorMessage(error)}
    </p>
  );
}
