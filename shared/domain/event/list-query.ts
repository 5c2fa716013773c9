import * as v from 'valibot';
import { fromQuery, integerIn } from '../validation.ts';
import { CURSOR } from '../pagination.ts';

/** GET /events's query, as the route validates it and the API reference documents it. */
export const ListEventsQuery = v.object({
  cursor: v.optional(fromQuery(CURSOR)),
  limit: v.optional(fromQuery(integerIn(1, 100)), '50'),
  types: v.optional(
    v.pipe(
      v.string(),
      v.description(
        'Comma-separated event types; a type that carries changed_fields may take a colon and field names, and then only its events that changed at least one of them pass: `product.updated:price,name,order.paid` (docs/webhooks.md, "What changed").',
      ),
    ),
  ),
  exclude_own: v.optional(v.picklist(['true', 'false'], 'must be true or false'), 'false'),
});
