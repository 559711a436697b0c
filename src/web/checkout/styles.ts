// The payer page's stylesheet: mobile first (320 px up; the chosen method's fields open under it, its hint
// giving way, so the Mobile Money network and number are above the fold at 360x740), system fonts, AA
// contrast, visible focus, a two-column layout from 860 px, and print rules that print only the cash slip.
// Inline in the page (one request less on a slow phone), allowed by its hash in the Content-Security-Policy.
export const CHECKOUT_CSS = `
:root{--ink:#16202b;--muted:#4a5563;--line:#d6dbe1;--bg:#f3f5f7;--brand:#0b6b3a;--brand-dark:#07502b;--brand-soft:#eef7f1;--focus:#1a56db;--err:#b42318;--err-bg:#fdf0ef;--warn-bg:#fff4cc;--warn-ink:#4d3500}
*{box-sizing:border-box}
[hidden]{display:none!important}
body{margin:0;background:var(--bg);color:var(--ink);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;-webkit-text-size-adjust:100%}
a{color:#0b57d0}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
h1,h2,h3{line-height:1.25;margin:0 0 .5rem}h1{font-size:1.2rem}h2{font-size:1.2rem}h3{font-size:1rem;margin-top:1rem}
h2:focus{outline:none}
p{margin:.5rem 0}
.vh{position:absolute!important;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.testbar{background:#ffe08a;color:#3a2800;text-align:center;font-weight:700;padding:.5rem 1rem;border-bottom:2px solid #c99700}
.wrap{max-width:31rem;margin:0 auto;padding:1rem .75rem 1.5rem}
.summary{padding:.25rem .25rem .85rem}
.payee{color:var(--muted);font-size:.95rem;margin:0 0 .15rem}
.amount{font-size:2.1rem;line-height:1.2;font-weight:750;letter-spacing:-.01em;margin:.1rem 0}
.desc{margin:.25rem 0 .5rem}
.meta{color:var(--muted);font-size:.9rem;margin:.15rem 0}
.items{list-style:none;margin:.6rem 0 0;padding:.35rem 0 0;border-top:1px solid var(--line);font-size:.95rem}
.items li,.kv div{display:flex;justify-content:space-between;gap:1rem;padding:.15rem 0}
.items .total{border-top:1px solid var(--line);margin-top:.25rem;padding-top:.35rem;font-weight:700}
.num{font-variant-numeric:tabular-nums;white-space:nowrap}
.card{background:#fff;border:1px solid var(--line);border-radius:14px;padding:1.1rem;box-shadow:0 1px 2px rgba(16,24,40,.05)}
fieldset{border:0;margin:0 0 1rem;padding:0;min-width:0}
legend{padding:0;margin-bottom:.5rem;font-weight:700}
.rails{display:grid;gap:.5rem}
.opt{display:flex;align-items:center;gap:.7rem;border:1px solid var(--line);border-radius:10px;padding:.75rem .8rem;cursor:pointer;background:#fff}
.opt:has(input:checked){border-color:var(--brand);box-shadow:0 0 0 1px var(--brand);background:var(--brand-soft)}
.opt input{width:1.15rem;height:1.15rem;margin:0;accent-color:var(--brand);flex:none}
.rails>.opt{padding:.6rem .7rem;gap:.6rem}.rails>.opt .name{font-size:.97rem}
.rails>.opt:has(input:checked) .sub{display:none}
.opt .name{font-weight:650;display:block;line-height:1.3}.opt .sub{display:block;color:var(--muted);font-size:.82rem;line-height:1.3}
.opt .price{margin-left:auto;text-align:right;line-height:1.3}.opt .price b{display:block}.opt .price small{color:var(--muted);font-size:.8rem;white-space:nowrap}
.rails .panel{margin:0 0 .35rem;padding:.1rem .1rem 0}
.nets{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:.5rem}
.nets .opt{flex-direction:column;justify-content:center;gap:.2rem;padding:.4rem .3rem;min-width:0;text-align:center;font-weight:600;font-size:.9rem;line-height:1.2;overflow-wrap:anywhere}
label.field{display:block;font-weight:700;margin:.25rem 0 .3rem}
input[type=tel],input[type=text]{font:inherit;font-size:1.1rem;width:100%;padding:.7rem .75rem;border:1px solid #6b7380;border-radius:9px;background:#fff;color:var(--ink)}
input[aria-invalid=true]{border-color:var(--err);box-shadow:0 0 0 1px var(--err)}
.hint{color:var(--muted);font-size:.9rem;margin:.35rem 0 0}
.msg{font-size:.92rem;margin:.4rem 0 0;font-weight:600}.msg.ok{color:var(--brand)}.msg.bad{color:var(--err)}.msg.warn{color:var(--warn-ink);background:var(--warn-bg);border-radius:8px;padding:.45rem .6rem}
.choice{display:flex;flex-wrap:wrap;gap:.5rem;margin:.5rem 0 0}.choice button{padding:.5rem .75rem;font-size:.92rem}
.rails>.go{margin:.1rem 0 .6rem}.go .error{margin-top:0}
.note{background:var(--brand-soft);border-radius:8px;padding:.6rem .8rem;margin:0 0 1rem}
.panel{margin:0 0 1rem}.panel p{margin-top:0}.panel fieldset{margin-bottom:.5rem}.panel legend{margin-bottom:.35rem}
.prompt{background:var(--brand-soft);border-left:4px solid var(--brand);border-radius:8px;padding:.6rem .8rem;font-weight:600;white-space:pre-line;overflow-wrap:anywhere}
.error{background:var(--err-bg);color:var(--err);border-left:4px solid var(--err);border-radius:8px;padding:.6rem .8rem;font-weight:600}
button,.button{font:inherit;font-weight:700;display:inline-block;text-align:center;text-decoration:none;cursor:pointer;border-radius:10px;padding:.8rem 1rem;border:2px solid var(--brand);background:var(--brand);color:#fff}
button:hover,.button:hover{background:var(--brand-dark);border-color:var(--brand-dark)}
button:disabled{opacity:.65;cursor:progress}
.block{display:block;width:100%;font-size:1.05rem}
.secondary{background:#fff;color:var(--brand)}.secondary:hover{background:var(--brand-soft);color:var(--brand-dark)}
.actions{display:grid;gap:.6rem;margin-top:1rem}
.screen{text-align:left}
.icon{width:3rem;height:3rem;border-radius:50%;display:grid;place-items:center;margin-bottom:.75rem;font-size:1.6rem;font-weight:800;color:#fff;background:var(--brand)}
.icon.bad{background:var(--err)}.icon.wait{background:#fff;border:4px solid #cfe5d7;border-top-color:var(--brand);animation:spin 1s linear infinite}
.icon.info{background:#475467}
@keyframes spin{to{transform:rotate(360deg)}}
@media (prefers-reduced-motion:reduce){.icon.wait{animation:none}}
.kv{margin:1rem 0;padding:.6rem 0;border-top:1px solid var(--line);border-bottom:1px solid var(--line)}
.kv dt{color:var(--muted);white-space:nowrap}.kv dd{margin:0;font-weight:650;text-align:right;overflow-wrap:anywhere}
.ref{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;letter-spacing:.04em}
.big{font-size:1.3rem}.kv .stack{display:block}.kv .stack dd{text-align:left}.kv .stack dd.big{font-size:1.3rem}
.kv dd.ref:not(.big){font-size:.95rem}
.kv div{align-items:baseline}.copyval{display:inline-flex;align-items:center;flex-wrap:wrap;justify-content:flex-end;gap:.5rem}.stack .copyval{justify-content:flex-start}
button.copy{font:700 .85rem/1.2 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;letter-spacing:0;padding:.4rem .7rem;border-width:1px;border-radius:8px;background:#fff;color:var(--brand)}
button.copy:hover{background:var(--brand-soft);color:var(--brand-dark)}
.groups{font-size:1.6rem;letter-spacing:.06em;line-height:1.3}.groups span+span{margin-left:.45em}
.test{margin-top:1rem;background:var(--warn-bg);color:var(--warn-ink);border:1px dashed #b48600;border-radius:10px;padding:.75rem}
.test h3{margin:0 0 .25rem;font-size:.95rem}.test p{margin:0 0 .5rem;font-size:.9rem}
.outcomes{display:grid;grid-template-columns:repeat(auto-fill,minmax(8rem,1fr));gap:.4rem}
.outcomes button{padding:.45rem .5rem;font-size:.9rem;background:#fff;color:#3a2800;border:1px solid #8a6a00}
.outcomes button:hover{background:#fff9e3}
.late,.gap{margin-top:1rem}
details{margin-top:1rem}summary{cursor:pointer;font-weight:700;color:#0b57d0;padding:.35rem 0}
.slip{border:2px dashed #5b6470;border-radius:12px;padding:1rem;background:#fff;margin-top:1rem}
.slip-top{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start}
.slip-top .kv{flex:1 1 12rem;margin:0;border:0;padding:0}
svg.qr{width:8.5rem;height:8.5rem;flex:none}
.stamp{border:2px solid #8a6a00;color:var(--warn-ink);background:var(--warn-bg);border-radius:6px;padding:.3rem .6rem;font-weight:700;display:inline-block;margin:0 0 .5rem}
.banks{columns:2 14rem;column-gap:1.5rem;padding-left:1.1rem;font-size:.9rem;margin:.25rem 0 0}.banks li{break-inside:avoid;margin-bottom:.3rem}
footer{max-width:60rem;margin:0 auto;padding:0 1rem 2rem;color:var(--muted);font-size:.85rem;text-align:center}
@media (min-width:860px){
.wrap{max-width:62rem;display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1.15fr);gap:2.5rem;align-items:start;padding-top:2.5rem}
.summary{position:sticky;top:1.5rem}.amount{font-size:2.5rem}.card{padding:1.6rem}
.wrap.solo{display:block;max-width:46rem}.solo .summary{position:static}.solo .actions{grid-template-columns:1fr 1fr}
}
@media print{
body{background:#fff}body *{visibility:hidden}.slip,.slip *{visibility:visible}
.slip{position:absolute;left:0;top:0;width:100%;border:2px solid #000;margin:0}
}
`.trim();
