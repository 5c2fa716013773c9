import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { Group } from '#http/api-routes.ts';

export type HttpLambda = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** The endpoint-group Lambdas the local gateway runs: the same modules the CDK stack bundles, one per group. */
export const httpLambdas: Readonly<Record<Group, () => Promise<{ handler: HttpLambda }>>> = {
  products: () => import('#functions/products/handler.ts'),
  orders: () => import('#functions/orders/handler.ts'),
  catalog: () => import('#functions/catalog/handler.ts'),
  content: () => import('#functions/content/handler.ts'),
  mcp: () => import('#functions/mcp/handler.ts'),
};
