import { createHttpHandler, type GroupOperations } from '#http/http-handler.ts';
import { listProducts } from './routes/list-products.ts';
import { getProduct } from './routes/get-product.ts';

/** Catalog reads: GET /products, GET /products/{id} (catalog:read). */
export const operations = { listProducts, getProduct } satisfies GroupOperations<'products'>;

// Pure: the MCP server imports this module for its operations only, and its bundle leaves out this Lambda.
export const handler = /* @__PURE__ */ createHttpHandler('products', operations);
