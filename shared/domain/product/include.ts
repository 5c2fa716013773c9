import * as v from 'valibot';

/** `include=offers`, the one query parameter of the single-product endpoints (read and write). */
export const IncludeQuery = v.strictObject({ include: v.optional(v.picklist(['offers'], 'the only value is offers')) });
