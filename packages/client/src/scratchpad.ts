import type { ApiClient } from './client.js';

// Scratchpad entries travel as raw text, not JSON, both ways.

export async function getScratchpadEntry(
  client: ApiClient,
  pipelineId: string,
  key: string,
): Promise<string> {
  const { data } = await client.GET('/pipelines/id/{id}/scratchpad/key/{key}', {
    params: { path: { id: pipelineId, key } },
    parseAs: 'text',
  });
  return data ?? '';
}

export async function setScratchpadEntry(
  client: ApiClient,
  pipelineId: string,
  key: string,
  value: string,
): Promise<void> {
  await client.PUT('/pipelines/id/{id}/scratchpad/key/{key}', {
    params: { path: { id: pipelineId, key } },
    body: value,
    bodySerializer: (body: string) => body,
    headers: { 'Content-Type': 'text/plain; charset=utf-8' },
  });
}
