import * as v from 'valibot';

/** Argument schemas the admin commands share (the CLI passes every flag as a string). */
export const KeyIdArg = v.pipe(
  v.union([v.number(), v.string()]),
  v.transform(Number),
  v.number(),
  v.integer('must be an integer'),
  v.minValue(1, 'must be a key id'),
);
