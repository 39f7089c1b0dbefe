/**
 * Every error code the server produces, with the HTTP status it is answered with and what
 * it means. DomainError only takes these codes, so a code without a status does not
 * compile; the spec lists the same codes and statuses (its description's table of errors,
 * and each error response by status), and a unit test holds the two together.
 */
export const ERROR_CODES = {
  invalid_request_body: { status: 400, meaning: 'the body does not match its schema or breaks a rule' },
  invalid_json: { status: 400, meaning: 'the body is not valid JSON, or not UTF-8' },
  invalid_query_parameter: {
    status: 400,
    meaning: 'a query parameter is malformed, out of range or unknown',
  },
  invalid_route_variable: { status: 400, meaning: 'a path segment is malformed' },
  missing_project_id: { status: 400, meaning: 'a project route was called without its project header' },
  authentication_required: { status: 401, meaning: 'no API key was sent' },
  invalid_api_key: { status: 401, meaning: 'the API key is unknown, revoked or disabled' },
  permission_denied: { status: 403, meaning: 'the key may not do this' },
  invalid_webhook_signature: {
    status: 403,
    meaning: "a webhook delivery's signature or token is missing or not made with the webhook's secret",
  },
  webhook_secret_not_set: {
    status: 403,
    meaning: 'the webhook requires signed deliveries and has no secret',
  },
  route_not_found: { status: 404, meaning: 'no route has this path' },
  unknown_project: { status: 404, meaning: 'no such project in the organization' },
  unknown_account: { status: 404, meaning: 'no such account' },
  unknown_api_key: { status: 404, meaning: 'no such API key in the organization' },
  unknown_resource: { status: 404, meaning: 'no such resource in the project' },
  unknown_command: { status: 404, meaning: 'no such command in the project' },
  unknown_command_execution: { status: 404, meaning: 'no such command execution in the project' },
  unknown_pipeline: { status: 404, meaning: 'no such pipeline in the project' },
  unknown_task: { status: 404, meaning: 'no such task in the project' },
  unknown_event: { status: 404, meaning: 'no such event in the project' },
  unknown_scratchpad_entry: { status: 404, meaning: 'no such key in the scratchpad' },
  unknown_webhook: {
    status: 404,
    meaning: 'no webhook has this identifier, or the trigger is not of connector webhook',
  },
  unknown_identity: { status: 404, meaning: 'no such identity in the project' },
  unknown_organization: { status: 404, meaning: 'no organization has this name (admin commands)' },
  method_not_allowed: { status: 405, meaning: 'the path exists, not with this method' },
  duplicate_project_name: { status: 409, meaning: 'another project of the organization has this name' },
  duplicate_organization: { status: 409, meaning: 'another organization has this name (admin commands)' },
  duplicate_account: { status: 409, meaning: 'another account has this email address' },
  duplicate_identity_name: {
    status: 409,
    meaning: 'another identity of the project has this name, or one giving the same variables',
  },
  pipeline_finished: { status: 409, meaning: 'the pipeline has already ended' },
  pipeline_not_finished: { status: 409, meaning: 'the pipeline has not ended yet' },
  pipeline_not_failed: { status: 409, meaning: 'the pipeline did not fail' },
  duplicate_webhook_delivery: {
    status: 409,
    meaning: 'the webhook received this delivery (identifier or body) within the replay window',
  },
  request_body_too_large: { status: 413, meaning: 'the body exceeds the limit' },
  unsupported_media_type: { status: 415, meaning: 'the body has a content type the route does not accept' },
  rate_limited: { status: 429, meaning: 'the key sent too many requests' },
  internal_error: { status: 500, meaning: 'an unexpected failure in the server' },
  service_unavailable: { status: 503, meaning: 'the server is stopping, or its storage refuses writes' },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
