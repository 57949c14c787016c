/** JSON from Redis, or undefined when it does not parse: callers validate the shape with zod. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
