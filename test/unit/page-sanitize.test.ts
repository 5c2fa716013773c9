import { describe, expect, it } from 'vitest';
import sanitizeHtml from 'sanitize-html';
import {
  ALLOWED_TAGS,
  MAX_NESTING,
  NestingTooDeepError,
  isHttpsImageSource,
  sanitizePageBody,
} from '#domain/page/sanitize.ts';
import { XSS_PAYLOADS as PAYLOADS } from '#fixtures/xss-payloads.ts';

const ALLOWED_ATTRIBUTES: Record<string, string[]> = {
  a: ['href', 'title'],
  img: ['src', 'alt', 'title', 'width', 'height'],
  ol: ['start'],
  th: ['colspan', 'rowspan', 'scope'],
  td: ['colspan', 'rowspan'],
};

/**
 * What a sanitized body must be, checked two ways: without a parser (every `<` opens an allowed
 * tag, since text `<` is always escaped) and with one (every element and attribute allowed,
 * every URL of an allowed kind). Plus idempotence: sanitizing the output again changes nothing,
 * so nothing in it depends on a second reading.
 */
function expectSafe(output: string) {
  for (const m of output.matchAll(/<\/?([^\s/>]*)/g))
    expect(ALLOWED_TAGS, `tag in ${output}`).toContain(m[1]!.toLowerCase());
  expect(output).not.toMatch(/<!--|<!\[CDATA|<\?/);
  // Attribute names of every tag (values are always double-quoted, with `"` escaped inside).
  for (const tag of output.match(/<[^>]*>/g) ?? []) {
    expect(tag.replace(/"[^"]*"/g, '""').toLowerCase()).not.toMatch(
      /\s(on[a-z]+|style|srcdoc|srcset|xlink:href|background|formaction)\s*=/,
    );
  }
  const seen: { name: string; attribs: Record<string, string> }[] = [];
  sanitizeHtml(output, {
    allowedTags: false,
    allowedAttributes: false,
    allowVulnerableTags: true,
    onOpenTag: (name, attribs) => seen.push({ name, attribs }),
  });
  for (const { name, attribs } of seen) {
    expect(ALLOWED_TAGS).toContain(name);
    for (const [attr, value] of Object.entries(attribs)) {
      expect(ALLOWED_ATTRIBUTES[name] ?? [], `${name}[${attr}] in ${output}`).toContain(attr);
      if (attr === 'src') expect(value).toMatch(/^https:\/\/[^/]/);
      if (attr === 'href')
        expect(value.replace(/[\x00-\x20]/g, '')).toMatch(/^(https?:\/\/[^/]|mailto:|[/#?]|[^:]*$)/i);
    }
  }
  expect(sanitizePageBody(output)).toBe(output);
}

describe('sanitizePageBody: XSS payloads', () => {
  it.each(PAYLOADS)('neutralizes %s', (payload) => {
    expectSafe(sanitizePageBody(payload));
  });

  it('drops scripts, styles and their content entirely', () => {
    expect(sanitizePageBody('<p>a</p><script>alert(1)</script><style>p{}</style><p>b</p>')).toBe('<p>a</p><p>b</p>');
  });

  it('drops an image whose source is not an absolute https URL, and every event handler of one that is', () => {
    expect(sanitizePageBody('<img src=x onerror=alert(1)>')).toBe('');
    expect(sanitizePageBody('<img src="http://insecure.example/a.png">')).toBe('');
    expect(sanitizePageBody('<img src="data:image/png;base64,AAAA">')).toBe('');
    expect(sanitizePageBody('<img src="https://ok.example/a.png" onerror="alert(1)">')).toBe(
      '<img src="https://ok.example/a.png" />',
    );
  });

  it('keeps the text of a link whose target is refused, and drops the link', () => {
    for (const href of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      '&#106;avascript:alert(1)',
      'data:text/html,x',
      'vbscript:x',
      '//evil.example/',
    ]) {
      expect(sanitizePageBody(`<a href="${href}">click <b>me</b></a>`)).toBe('click <b>me</b>');
    }
  });

  it('drops SVG, MathML, iframes and other embedded documents with their content', () => {
    expect(sanitizePageBody('<svg onload=alert(1)><text>hi</text></svg>after')).toBe('after');
    expect(sanitizePageBody('<iframe src="https://x.example/">fallback</iframe>after')).toBe('after');
    expect(sanitizePageBody('<math><mi>x</mi></math>after')).toBe('after');
  });

  it('keeps text that looks like markup as text', () => {
    expect(sanitizePageBody('&lt;script&gt;alert(1)&lt;/script&gt;')).toBe('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(sanitizePageBody('<p>1 < 2 & 3 > 2</p>')).toBe('<p>1 &lt; 2 &amp; 3 &gt; 2</p>');
  });

  it('removes control characters and mends lone surrogates', () => {
    expect(sanitizePageBody('<p>a\u0000b\u0007c\u001Fd\u007Fe</p>')).toBe('<p>abcde</p>');
    expect(sanitizePageBody('<p>a\tb\nc</p>')).toBe('<p>a\tb\nc</p>');
    expect(sanitizePageBody('<p>\uD800x\uDC00 😀</p>')).toBe('<p>\uFFFDx\uFFFD 😀</p>');
  });
});

describe('sanitizePageBody: the allow-list keeps ordinary content', () => {
  const KEPT = [
    '<h1>Title</h1><h2>A</h2><h3>B</h3><h4>C</h4><h5>D</h5><h6>E</h6>',
    '<p>Plain <em>emphasis</em>, <strong>strong</strong>, <b>bold</b>, <i>italic</i> and <code>code</code>.</p>',
    '<p>line<br />break</p><hr />',
    '<ul><li>one</li><li>two</li></ul><ol start="3"><li>three</li></ol>',
    '<blockquote><p>Quoted</p></blockquote><pre><code>const a = 1;</code></pre>',
    '<table><caption>Sizes</caption><thead><tr><th scope="col">A</th></tr></thead><tbody><tr><td colspan="2" rowspan="1">1</td></tr></tbody><tfoot><tr><td>f</td></tr></tfoot></table>',
    '<p><a href="https://example.com/a?b=1&amp;c=2" title="Example">https</a> <a href="http://example.com/">http</a> <a href="mailto:shop@example.com">mail</a></p>',
    '<p><a href="/about-us">relative</a> <a href="#top">anchor</a> <a href="?page=2">query</a></p>',
    '<p><img src="https://cdn.example.com/oak.jpg" alt="Oak chair" title="Chair" width="640" height="480" /></p>',
    '<p>Ünïcödé — “quotes” &amp; emoji 😀</p>',
  ];
  it.each(KEPT)('keeps %s', (html) => {
    expect(sanitizePageBody(html)).toBe(html);
  });

  it('unwraps tags outside the list but keeps their text', () => {
    expect(sanitizePageBody('<div><span class="x">Hello</span> <u>world</u></div>')).toBe('Hello world');
  });

  it('normalizes markup spelling (case, quotes, void elements)', () => {
    expect(sanitizePageBody("<P>x<BR><IMG SRC='https://a.example/i.png' ALT=pic></P>")).toBe(
      '<p>x<br /><img src="https://a.example/i.png" alt="pic" /></p>',
    );
  });
});

describe('sanitizePageBody: nesting bound (the parser is quadratic in depth)', () => {
  it('accepts nesting up to the bound, with unclosed or mismatched tags counted as the parser counts them', () => {
    const deep = '<blockquote>'.repeat(MAX_NESTING) + 'x' + '</blockquote>'.repeat(MAX_NESTING);
    expect(sanitizePageBody(deep)).toBe(deep);
    // Implied closes (`<p>` after `<p>`, `<li>` after `<li>`) and void elements do not nest.
    expect(() =>
      sanitizePageBody('<ul>' + '<li>x'.repeat(5000) + '</ul>' + '<p>y'.repeat(5000) + '<br>'.repeat(5000)),
    ).not.toThrow();
  });

  // How fast is the bench's to say, not a test's (a loaded machine is slow at everything): here
  // the refusal itself is the subject. Without the bound, 300,000 open tags would hold the
  // parser for minutes and this test would hit its timeout instead of seeing the error.
  it('refuses deeper nesting, even of tags that would be removed', () => {
    for (const html of ['<b>'.repeat(MAX_NESTING + 1), '<span>'.repeat(300_000), '<b></x>'.repeat(300_000)]) {
      expect(() => sanitizePageBody(html)).toThrow(NestingTooDeepError);
    }
  });

  it('accepts a 1 MiB body just inside the bound, unchanged', () => {
    const html = ('<b>'.repeat(MAX_NESTING - 1) + '</b>'.repeat(MAX_NESTING - 1)).repeat(
      Math.floor((1024 * 1024) / (7 * MAX_NESTING)),
    );
    expect(sanitizePageBody(html)).toBe(html);
  });
});

describe('isHttpsImageSource', () => {
  it.each([
    ['https://cdn.example.com/a.png', true],
    ['HTTPS://CDN.example.com/a.png', true],
    [' https://cdn.example.com/a.png', true],
    ['http://cdn.example.com/a.png', false],
    ['//cdn.example.com/a.png', false],
    ['/a.png', false],
    ['a.png', false],
    ['https:/a.png', false],
    ['https:///a.png', false],
    ['https:\\\\evil.example', false],
    ['data:image/png;base64,AAAA', false],
    ['javascript:alert(1)', false],
  ])('%s → %s', (src, ok) => {
    expect(isHttpsImageSource(src)).toBe(ok);
  });
});
