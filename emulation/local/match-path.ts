import { API_BASE_PATH, API_ROUTES, type ApiRoute } from '#http/api-routes.ts';

/** HEAD is answered by the GET route, as API Gateway does. */
const routeMethod = (method: string) => (method === 'HEAD' ? 'GET' : method);

/**
 * Matches a concrete request path (with the base path) against the templates, as API Gateway
 * does: literal segments win over `{param}` segments, a parameter never spans a `/`.
 */
export function matchPath(
  method: string,
  path: string,
):
  | { route: ApiRoute; pathParameters: Record<string, string> }
  | { route: undefined; pathOf?: { route: ApiRoute; pathParameters: Record<string, string> } } {
  if (!path.startsWith(API_BASE_PATH + '/')) return { route: undefined };
  const segments = path.slice(API_BASE_PATH.length).split('/').slice(1);
  const candidates: { route: ApiRoute; params: Record<string, string>; literal: number }[] = [];
  for (const route of API_ROUTES as readonly ApiRoute[]) {
    const template = route.path.split('/').slice(1);
    if (template.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let literal = 0;
    let ok = true;
    for (let i = 0; i < template.length && ok; i++) {
      const t = template[i] as string;
      const s = segments[i] as string;
      if (t.startsWith('{')) {
        if (s === '') ok = false;
        else {
          try {
            params[t.slice(1, -1)] = decodeURIComponent(s);
          } catch {
            ok = false;
          }
        }
      } else if (t === s) literal++;
      else ok = false;
    }
    if (!ok) continue;
    candidates.push({ route, params, literal });
  }
  // The most literal resource wins first and only then the method, as in API Gateway: PUT on
  // `/catalog/products/batch` is that resource's 405, not a product named "batch".
  const literal = Math.max(...candidates.map((c) => c.literal));
  const resource = candidates.filter((c) => c.literal === literal);
  const best = resource.find((c) => c.route.method === routeMethod(method));
  if (best) return { route: best.route, pathParameters: best.params };
  // The path is known without this method: its group's Lambda answers 405 (API Gateway's ANY method).
  const known = resource[0];
  return { route: undefined, ...(known ? { pathOf: { route: known.route, pathParameters: known.params } } : {}) };
}
