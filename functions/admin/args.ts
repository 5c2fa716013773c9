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

/** A whole number between `min` and `max`, given as a number or (from the CLI) a string. */
export const IntegerArg = (min: number, max: number) =>
  v.pipe(
    v.union([v.number(), v.string()]),
    v.transform(Number),
    v.number(),
    v.integer('must be an integer'),
    v.minValue(min),
    v.maxValue(max),
  );
