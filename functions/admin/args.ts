import * as v from 'valibot';

/** Argument schemas the admin commands share (the CLI passes every flag as a string). */
export const KeyIdArg = v.pipe(
  v.union([v.number(), v.string()]),
  v.transform(Number),
  v.number(),
  v.integer('must be an integer'),
  v.minValue(1, 'must be a key id'),
);

export const StoreIdArg = v.pipe(
  v.string(),
  v.regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be 1-63 lower-case letters, digits or hyphens'),
);
