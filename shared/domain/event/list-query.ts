import * as v from 'valibot';
import { fromQuery, integerIn } from '../validation.ts';
import { CURSOR } from '../pagination.ts';

/** GET /events's query, as the route validates it and the API reference documents it. */
export const ListEventsQuery = v.object({
  cursor: v.optional(fromQuery(CURSOR)),
  limit: v.optional(fromQuery(integerIn(1, 100)), '50'),
  types: v.optional(v.string()),
  exclude_own: v.optional(v.picklist(['true', 'false'], 'must be true or false'), 'false'),
});
