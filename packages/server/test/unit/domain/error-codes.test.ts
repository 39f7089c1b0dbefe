import { openapiDocument } from '@pipewright/types';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../../../src/domain/error-codes.js';
import type { DomainError } from '../../../src/domain/errors.js';

type Json = Record<string, unknown>;

const tableCodes = Object.entries(ERROR_CODES)
  .map(([code, { status }]) => `${status} ${code}`)
  .sort();

/** The codes of the table of errors in the spec's description, each as "status code". */
function describedCodes(): string[] {
  const { description } = openapiDocument.info as { description: string };
  return description
    .split('\n')
    .flatMap((line) => {
      const row = /^\| (\d{3}) +\| (.+?) +\|/.exec(line);
      if (!row) return [];
      return [...(row[2] ?? '').matchAll(/`([a-z_]+)`/g)].map((code) => `${row[1]} ${code[1]}`);
    })
    .sort();
}

/** The codes each error response of an operation lists, each as "status code". */
function respondedCodes(): string[] {
  const responses = (openapiDocument.components as { responses: Record<string, Json> }).responses;
  const found = new Set<string>();
  for (const operations of Object.values(openapiDocument.paths as Record<string, Record<string, Json>>)) {
    for (const operation of Object.values(operations)) {
      for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, Json>)) {
        const ref = response.$ref;
        if (typeof ref !== 'string') continue;
        const named = responses[ref.slice('#/components/responses/'.length)] as Json;
        const schema = (named.content as Record<string, { schema: { allOf: Json[] } }>)['application/json']
          ?.schema;
        for (const part of schema?.allOf ?? []) {
          const codes = ((part.properties as Json | undefined)?.code as { enum?: string[] } | undefined)
            ?.enum;
          for (const code of codes ?? []) found.add(`${status} ${code}`);
        }
      }
    }
  }
  return [...found].sort();
}

describe('the table of error codes', () => {
  it('holds the codes and statuses of the spec, both ways', () => {
    expect(describedCodes()).toEqual(tableCodes);
  });

  it('has every code an error response of the spec lists, with the status it is listed under', () => {
    const codes = respondedCodes();
    expect(codes.length).toBeGreaterThan(0);
    expect(codes.filter((code) => !tableCodes.includes(code))).toEqual([]);
  });

  it('is the only source of codes: DomainError takes no other (a typo does not compile)', () => {
    expectTypeOf<ConstructorParameters<typeof DomainError>[0]>().toEqualTypeOf<ErrorCode>();
    expectTypeOf<'unknown_widget'>().not.toExtend<ErrorCode>();
  });
});
