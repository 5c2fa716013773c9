import { createHttpHandler } from '../../shared/http/http-handler.ts';
import { listProducts } from './routes/list-products.ts';
import { getProduct } from './routes/get-product.ts';

/** Catalog reads: GET /products, GET /products/{id} (catalog:read). */
export const handler = createHttpHandler({ listProducts, getProduct });
