import { createHttpHandler } from '../../shared/http/http-handler.ts';
import { listPagesRoute } from './routes/list-pages.ts';
import { savePageRoute } from './routes/save-page.ts';
import { publishPageRoute } from './routes/publish-page.ts';
import { unpublishPageRoute } from './routes/unpublish-page.ts';

/** Content pages and blog posts: GET /content/pages (content:read), PUT, publish, unpublish (content:write). */
export const handler = createHttpHandler({
  listPages: listPagesRoute,
  savePage: savePageRoute,
  publishPage: publishPageRoute,
  unpublishPage: unpublishPageRoute,
});
