// Shared TypeBox schemas: the same objects validate requests, serialise responses and feed /openapi.json.
import { Type, type TSchema } from '@sinclair/typebox';

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'Stable machine-readable code (SPEC 7).' }),
      message: Type.String({ description: 'Human-readable explanation.' }),
      retry_after_seconds: Type.Optional(Type.Integer()),
      fields: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
      detail: Type.Optional(Type.String()),
    }),
  },
  { $id: 'ErrorEnvelope', title: 'Error envelope' },
);

export const errorResponses = (...statuses: number[]): Record<number, TSchema> =>
  Object.fromEntries(statuses.map((status) => [status, Type.Ref('ErrorEnvelope')]));

/** A file download in the OpenAPI document (the payload is a Buffer, sent as it is). */
export const fileResponse = (contentType: string, description: string) => ({
  description,
  content: { [contentType]: { schema: { type: 'string', format: 'binary' } } },
});

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ description: 'Makes retries safe: the same key and body replay the first result for 24 hours (1-255 printable characters).' }),
  ),
});

export const DateTime = Type.String({ format: 'date-time' });
export const Currency = Type.String({ maxLength: 3, default: 'GHS', description: 'Currency; only GHS is supported.' });
