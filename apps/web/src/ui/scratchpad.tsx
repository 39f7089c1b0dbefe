import { setScratchpadEntry } from '@pipewright/client';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { dataOf } from '../api/data.js';
import { useProject } from '../api/project.js';
import { ConfirmButton } from './confirm.js';
import { ErrorNotice } from './notices.js';
import { TableScroll } from './table-scroll.js';

/** The scratchpad of a pipeline: its entries, a form to set one, and deleting them. */
export function Scratchpad({ pipelineId }: { pipelineId: string }) {
  const { client } = useProject();
  const queries = useQueryClient();
  const queryKey = ['scratchpad', pipelineId];
  const entries = useQuery({
    queryKey,
    queryFn: () =>
      dataOf(client.GET('/pipelines/id/{id}/scratchpad', { params: { path: { id: pipelineId } } })),
  });
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState('');
  const refresh = () => queries.invalidateQueries({ queryKey });
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      await setScratchpadEntry(client, pipelineId, key, value);
      setSaved(`Saved ${key}.`);
      await refresh();
    } catch (failure) {
      setError(failure);
    }
  };
  const list = Object.entries(entries.data ?? {});
  return (
    <section aria-labelledby="scratchpad-heading">
      <h2 id="scratchpad-heading">Scratchpad</h2>
      {entries.error && <ErrorNotice error={entries.error} />}
      {entries.data && list.length === 0 && <p className="muted">The scratchpad is empty.</p>}
      {list.length > 0 && (
        <TableScroll label="Scratchpad entries">
          <table>
            <caption className="visually-hidden">Scratchpad entries</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Value</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.map(([entryKey, entryValue]) => (
                <tr key={entryKey}>
                  <td className="mono">{entryKey}</td>
                  <td>
                    <pre className="value">{entryValue}</pre>
                  </td>
                  <td>
                    {/* A cell stays a cell: the row of buttons is inside it. */}
                    <div className="actions">
                      <button
                        type="button"
                        onClick={() => {
                          setKey(entryKey);
                          setValue(entryValue);
                        }}
                      >
                        Edit<span className="visually-hidden"> {entryKey}</span>
                      </button>
                      <ConfirmButton
                        danger
                        question={`Delete the entry ${entryKey}?`}
                        confirmLabel="Delete"
                        onConfirm={async () => {
                          await client.DELETE('/pipelines/id/{id}/scratchpad/key/{key}', {
                            params: { path: { id: pipelineId, key: entryKey } },
                          });
                          await refresh();
                        }}
                      >
                        Delete<span className="visually-hidden"> {entryKey}</span>
                      </ConfirmButton>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <form className="stack" onSubmit={(event) => void save(event)}>
        <label>
          Key
          <input required value={key} onChange={(event) => setKey(event.target.value)} />
        </label>
        <label>
          Value
          <textarea rows={3} value={value} onChange={(event) => setValue(event.target.value)} />
        </label>
        <div className="actions">
          <button type="submit" className="primary">
            Save entry
          </button>
          <span role="status">{saved}</span>
        </div>
        {error !== undefined && <ErrorNotice error={error} />}
      </form>
    </section>
  );
}
