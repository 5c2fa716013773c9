import { spendWriteBudget } from '#app/write-budget.ts';
import { createHttpHandler, type GroupOperations } from '#http/http-handler.ts';
import { listPages } from './routes/list-pages.ts';
import { savePage } from './routes/save-page.ts';
import { publishPage } from './routes/publish-page.ts';
import { unpublishPage } from './routes/unpublish-page.ts';

/** Content pages and blog posts: GET /content/pages (content:read), PUT, publish, unpublish (content:write). */
export const operations = { listPages, savePage, publishPage, unpublishPage } satisfies GroupOperations<'content'>;

export const handler = createHttpHandler('content', operations, { spendWriteBudget });
