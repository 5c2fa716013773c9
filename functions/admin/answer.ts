import { isRefused, type Refused } from '#domain/outcome.ts';

/**
 * A use case's answer shaped for the admin by `show`, or its refusal as it is: the admin Lambda
 * presents a refusal (./handler.ts), the CLI prints it as one error line and the console shows it.
 */
export const shown = <T, R>(answer: T | Refused, show: (value: T) => R): R | Refused =>
  isRefused(answer) ? answer : show(answer);
