import { createHttpHandler, type GroupOperations } from '../../shared/http/http-handler.ts';
import { upsertProduct } from './routes/upsert-product.ts';
import { updateProduct } from './routes/update-product.ts';
import { upsertCategory } from './routes/upsert-category.ts';
import { upsertTag } from './routes/upsert-tag.ts';
import { upsertProductBatchRoute } from './routes/upsert-product-batch.ts';

/** Catalog writes by the caller's external ids (catalog:write). */
export const operations = { upsertProduct, updateProduct, upsertProducts: upsertProductBatchRoute, upsertCategory, upsertTag } satisfies GroupOperations<'catalog'>;

export const handler = createHttpHandler('catalog', operations);
