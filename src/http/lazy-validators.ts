/**
 * Request validators compiled on a route's first request instead of at start-up (issue #14):
 * compiling every route's schemas was a quarter of the node's start-up CPU, for routes most nodes
 * never serve. Same compiler (fastify's Ajv compiler, same options), same validators, same errors:
 * only when they are built changes.
 */
import AjvCompiler from '@fastify/ajv-compiler';

type Validator = ((...args: unknown[]) => unknown) & { errors?: unknown };
type BuildValidator = (externalSchemas: unknown, options: unknown) => (route: unknown) => Validator;

/** A `compilersFactory.buildValidator` whose validators compile on first use. */
export function lazyValidators(): BuildValidator {
  const build = AjvCompiler() as unknown as BuildValidator;
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    return (route) => {
      let validator: Validator | undefined;
      const lazy: Validator = function (this: unknown, ...args: unknown[]) {
        validator ??= compile(route);
        const result = validator.apply(this, args);
        lazy.errors = validator.errors;
        return result;
      };
      return lazy;
    };
  };
}
