/** The `webhooks` section: one POST per event type, with the Standard Webhooks headers. */
import { WEBHOOK_EVENTS } from './webhook-events.ts';
import { outputSchema } from './json-schema.ts';
import { webhookExample } from './examples.ts';

const SIGNATURE_HEADERS = [
  {
    name: 'webhook-id',
    description: 'The event id (`evt_` + 32 hex), the same on every retry: deduplicate on it.',
    schema: { type: 'string', pattern: '^evt_[0-9a-f]{32}$' },
  },
  {
    name: 'webhook-timestamp',
    description: 'Unix seconds of this attempt; reject values more than 5 minutes from your clock.',
    schema: { type: 'string', pattern: '^\\d+$' },
  },
  {
    name: 'webhook-signature',
    description:
      'Space-separated `v1,<base64 HMAC-SHA256>` over `{webhook-id}.{webhook-timestamp}.{raw body}` keyed with your `whsec_` secret; two during a secret rotation.',
    schema: { type: 'string' },
  },
];

export function webhooksSection() {
  return Object.fromEntries(
    Object.entries(WEBHOOK_EVENTS).map(([type, event]) => {
      const example = webhookExample(type);
      return [
        type,
        {
          post: {
            operationId: `webhook_${type.replace(/\./g, '_')}`,
            summary: event.summary,
            description: `${event.description}\n\nSigned with [Standard Webhooks](https://www.standardwebhooks.com) (docs/webhooks.md). Delivery is at least once and not ordered; answer 2xx within 10 seconds.`,
            tags: ['orders'],
            security: [],
            parameters: SIGNATURE_HEADERS.map((h) => ({ ...h, in: 'header', required: true })),
            requestBody: {
              required: true,
              content: { 'application/json': { schema: outputSchema(event.body), ...(example ? { example } : {}) } },
            },
            responses: {
              '200': { description: 'Acknowledged (any 2xx).' },
              default: { description: 'Anything else is a failed attempt and is retried for 24 hours.' },
            },
          },
        },
      ];
    }),
  );
}
