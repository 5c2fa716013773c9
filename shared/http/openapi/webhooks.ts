/** The `webhooks` section: one POST per event type, with the Standard Webhooks headers. */
import { EVENT_BODIES, WEBHOOK_EVENTS } from './webhook-events.ts';
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

/** Every logged event's delivery also carries its sequence (a ping is no logged event). */
const SEQUENCE_HEADER = {
  name: 'webhook-sequence',
  description:
    'The `sequence` of the body: the event’s number in the store’s log, for a receiver that reads headers first.',
  schema: { type: 'string', pattern: '^[1-9]\\d*$' },
};

/** The tag of the paths whose resources the event is about (products, categories, tags: catalog). */
const tagOf = (type: string) =>
  type.startsWith('page.') ? 'content' : type.startsWith('order.') ? 'orders' : 'catalog';

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
            description: `${event.description}\n\nSigned with [Standard Webhooks](https://www.standardwebhooks.com) (docs/webhooks.md). Delivery is at least once and not ordered (\`sequence\` gives the order); answer 2xx within 10 seconds.`,
            tags: [tagOf(type)],
            security: [],
            parameters: [...SIGNATURE_HEADERS, ...(type in EVENT_BODIES ? [SEQUENCE_HEADER] : [])].map((h) => ({
              ...h,
              in: 'header',
              required: true,
            })),
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
