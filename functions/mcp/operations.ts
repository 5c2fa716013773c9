import type { RouteFn } from '../../shared/http/http-handler.ts';
import { listProducts } from '../products/routes/list-products.ts';
import { getProduct } from '../products/routes/get-product.ts';
import { upsertProduct } from '../catalog/routes/upsert-product.ts';
import { updateProduct } from '../catalog/routes/update-product.ts';
import { upsertCategory } from '../catalog/routes/upsert-category.ts';
import { upsertTag } from '../catalog/routes/upsert-tag.ts';
import { listOrders } from '../orders/routes/list-orders.ts';
import { setOrderStatus } from '../orders/routes/set-order-status.ts';
import { listPagesRoute } from '../content/routes/list-pages.ts';
import { savePageRoute } from '../content/routes/save-page.ts';
import { publishPageRoute } from '../content/routes/publish-page.ts';
import { unpublishPageRoute } from '../content/routes/unpublish-page.ts';

/**
 * The route functions the endpoint Lambdas run, by the operation name of API_ROUTES: a tool
 * calls the very function its endpoint does. A tool whose endpoint is not in API_ROUTES or has
 * no function here is not offered. A new endpoint gets its tool by a line here and an entry in tools.ts.
 */
export const OPERATIONS: Readonly<Record<string, RouteFn>> = {
  listProducts,
  getProduct,
  upsertProduct,
  updateProduct,
  upsertCategory,
  upsertTag,
  listOrders,
  setOrderStatus,
  listPages: listPagesRoute,
  savePage: savePageRoute,
  publishPage: publishPageRoute,
  unpublishPage: unpublishPageRoute,
};
