import { randomBytes } from 'node:crypto';

/**
 * What keeps a console action from happening twice and its secrets from showing twice, in this
 * process's memory only (a restart forgets all, like the session):
 *
 * - **Form tokens**: a form that creates or rotates carries a fresh token. The first POST with it
 *   runs the command; a second (a double click, a resubmitted form) gets the first one's answer and
 *   runs nothing. A token the console did not issue, or issued more than an hour ago, runs nothing.
 * - **Shown-once slots** (post/redirect/get): the POST keeps the new secrets under an unguessable id
 *   and redirects to `/shown/{id}`; the first GET takes them out, a reload finds only what they
 *   belonged to. A secret never travels in a URL, so it is in no history and no log.
 */
const FORM_TTL_MS = 60 * 60 * 1000;
const SLOT_TTL_MS = 10 * 60 * 1000;
/** Far more than one operator opens in an hour; past it the oldest go first. */
const LIMIT = 1000;

const newId = () => randomBytes(18).toString('base64url');

type Taken<Shown, Gone> = { kind: 'shown'; shown: Shown } | { kind: 'gone'; gone: Gone } | { kind: 'unknown' };

export class OneTime<Answer, Shown, Gone> {
  private readonly forms = new Map<string, { expires: number; answer?: Promise<Answer> }>();
  private readonly slots = new Map<string, { expires: number; shown?: Shown; gone: Gone }>();

  constructor(
    /** What a slot keeps once its secrets are taken (the title, the store, the key id). */
    private readonly forget: (shown: Shown) => Gone,
    private readonly now = () => Date.now(),
  ) {}

  /** A token for one form. */
  issue(): string {
    const token = newId();
    this.remember(this.forms, token, { expires: this.now() + FORM_TTL_MS });
    return token;
  }

  /** Runs `action` for the token's first POST; later ones share its answer. Undefined: not a live token. */
  once(token: string, action: () => Promise<Answer>): Promise<Answer> | undefined {
    const form = this.forms.get(token);
    if (!form || form.expires <= this.now()) return undefined;
    form.answer ??= action();
    return form.answer;
  }

  /** Keeps `shown` for one read; the id to redirect to. */
  put(shown: Shown): string {
    const id = newId();
    this.remember(this.slots, id, { expires: this.now() + SLOT_TTL_MS, shown, gone: this.forget(shown) });
    return id;
  }

  /** The first read gets the secrets; every later one only what they belonged to. */
  take(id: string): Taken<Shown, Gone> {
    const slot = this.slots.get(id);
    if (!slot || slot.expires <= this.now()) return { kind: 'unknown' };
    const { shown } = slot;
    if (!shown) return { kind: 'gone', gone: slot.gone };
    delete slot.shown;
    return { kind: 'shown', shown };
  }

  private remember<T extends { expires: number }>(map: Map<string, T>, id: string, entry: T) {
    const now = this.now();
    for (const [k, e] of map) if (e.expires <= now || map.size >= LIMIT) map.delete(k);
    map.set(id, entry);
  }
}
