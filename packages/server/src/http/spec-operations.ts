type Parameter = { in: string; name: string };
type ParameterOrRef = Parameter | { $ref: string };

/** One operation of the spec, with every parameter it takes: its own and its path's. */
export interface SpecOperation {
  operationId: string;
  method: string;
  /** As the spec writes it, without the /v0 of the server URL: `/projects/id/{id}`. */
  path: string;
  parameters: Parameter[];
  /** Media types of its request body, if it takes one. */
  bodyTypes: string[];
  /** It takes no API key: its `security` is empty (webhook deliveries). */
  public: boolean;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'head', 'patch', 'options', 'trace']);

/** The operations of a bundled spec document, parameter references resolved. */
export function specOperations(document: Record<string, unknown>): SpecOperation[] {
  const components = (document.components ?? {}) as { parameters?: Record<string, Parameter> };
  const resolve = (parameter: ParameterOrRef): Parameter[] => {
    if (!('$ref' in parameter)) return [parameter];
    const resolved = components.parameters?.[parameter.$ref.replace('#/components/parameters/', '')];
    return resolved ? [resolved] : [];
  };
  const paths = (document.paths ?? {}) as Record<string, Record<string, unknown>>;
  return Object.entries(paths).flatMap(([path, item]) => {
    const pathLevel = ((item.parameters ?? []) as ParameterOrRef[]).flatMap(resolve);
    return Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, value]) => {
        const operation = value as {
          operationId?: string;
          parameters?: ParameterOrRef[];
          requestBody?: { content?: Record<string, unknown> };
          security?: unknown[];
        };
        return {
          operationId: operation.operationId ?? '',
          method,
          path,
          parameters: [...pathLevel, ...(operation.parameters ?? []).flatMap(resolve)],
          bodyTypes: Object.keys(operation.requestBody?.content ?? {}),
          public: operation.security?.length === 0,
        };
      });
  });
}
