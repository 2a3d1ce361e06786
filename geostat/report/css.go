package report

// css is the inline style sheet of the page, plots included. It uses local
// system fonts only.
const css = `
:root{--ink:#1f2430;--muted:#5b6270;--line:#dde1e7;--bg:#f4f6f9;--card:#fff;--navy:#14233c;
--ok:#1a7f37;--ok-bg:#e3f5e8;--warn:#9a6700;--warn-bg:#fff4d6;--bad:#c62828;--bad-bg:#fde8e8}
*{box-sizing:border-box}
html{background:var(--bg)}
body{margin:0;color:var(--ink);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
.wrap{max-width:1280px;margin:0 auto;padding:0 28px}
header.top{background:var(--navy);color:#fff;padding:26px 0 22px;margin-bottom:24px}
header.top h1{margin:2px 0 10px;font-size:26px;font-weight:650;letter-spacing:-.01em}
.kicker{margin:0;text-transform:uppercase;letter-spacing:.12em;font-size:11.5px;color:#9fb3d1}
.details{display:flex;flex-wrap:wrap;gap:8px 28px;margin:0}
.details div{display:flex;gap:8px;align-items:baseline}
.details dt{color:#9fb3d1;font-size:12.5px}
.details dd{margin:0;font-weight:600}
h2{font-size:18px;margin:34px 0 4px;font-weight:650}
h3{font-size:14px;margin:0;font-weight:600}
.lead{color:var(--muted);margin:0 0 14px;max-width:90ch}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(230px,1fr));gap:14px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px;box-shadow:0 1px 2px rgba(20,35,60,.05)}
.card .label{margin:0;color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.06em}
.card .big{margin:4px 0 2px;font-size:26px;font-weight:650;font-variant-numeric:tabular-nums}
.card .unit{font-size:14px;font-weight:500;color:var(--muted)}
.card .small{margin:2px 0 0;color:var(--muted);font-size:12.5px}
.card.verdict{grid-row:span 2;border-width:2px}
.badge{display:inline-block;margin:8px 0 4px;padding:4px 14px;border-radius:999px;font-weight:700;font-size:15px;text-transform:uppercase;letter-spacing:.08em}
.v-acceptable{border-color:var(--ok)}.v-acceptable .badge,.pill.v-acceptable{background:var(--ok-bg);color:var(--ok)}
.v-marginal{border-color:var(--warn)}.v-marginal .badge,.pill.v-marginal{background:var(--warn-bg);color:var(--warn)}
.v-failing{border-color:var(--bad)}.v-failing .badge,.pill.v-failing{background:var(--bad-bg);color:var(--bad)}
.pill{padding:1px 8px;border-radius:999px;font-size:12px;font-weight:600}
.warnings{background:var(--warn-bg);border:1px solid #f0d48a;border-radius:10px;padding:4px 18px;margin-top:18px}
.warnings h2{margin:10px 0 0;font-size:15px;color:var(--warn)}
.warnings ul{margin:6px 0 12px;padding-left:20px}
.plots{display:grid;grid-template-columns:repeat(auto-fill,minmax(380px,1fr));gap:16px}
.fig{margin:0;background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 14px 10px}
.fig figcaption{margin-bottom:4px}
.caption{margin:4px 0 0;color:var(--muted);font-size:12.5px}
.table-wrap{overflow-x:auto;background:var(--card);border:1px solid var(--line);border-radius:10px;margin-bottom:12px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums;font-size:13px}
th,td{padding:6px 12px;text-align:right;border-bottom:1px solid #eef0f3;white-space:nowrap}
thead th{background:#f8f9fb;color:var(--muted);font-weight:600}
tbody th{text-align:left;font-weight:600}
tr.exp td,tr.exp th{color:var(--muted);font-weight:400;font-style:italic}
details{margin:8px 0}
summary{cursor:pointer;font-weight:600;padding:6px 0}
.defs{display:grid;grid-template-columns:max-content 1fr;gap:8px 18px;background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 18px}
.defs dt{font-weight:600}
.defs dd{margin:0;color:#343a46}
footer{color:var(--muted);font-size:12px;padding-top:24px;padding-bottom:30px}
svg.plot{width:100%;height:auto;display:block}
svg.plot text{font-size:12.5px;fill:#4b5261;font-family:inherit}
svg.plot .frame{fill:#fff;stroke:#c8ced8}
svg.plot .grid line{stroke:#edf0f4;stroke-width:1}
svg.plot .axis-label{font-size:13.5px;fill:#262b36;font-weight:600}
svg.plot .legend text{font-size:12.5px;fill:#262b36}
svg.plot .note{fill:#8a909c;font-style:italic}
svg.plot path{fill:none;stroke-linejoin:round;stroke-linecap:round}
svg.plot path.real{stroke:#3d74b8;stroke-opacity:.3;stroke-width:1}
svg.plot .legend path.real{stroke-opacity:.6;stroke-width:1.5}
svg.plot path.mean{stroke:#15365f;stroke-width:2;stroke-dasharray:6 4}
svg.plot path.model{stroke:#d0343c;stroke-width:2.6}
svg.plot path.data{stroke:#111;stroke-width:2.2}
svg.plot path.ref{stroke:#7c8595;stroke-width:1.3;stroke-dasharray:4 4}
svg.plot path.sim{stroke:#3d74b8;stroke-width:1.4}
svg.plot path.sim2{stroke:#de8a1c;stroke-width:1.4}
svg.plot path.exp-sim{stroke:#3d74b8;stroke-width:1.3;stroke-dasharray:5 4}
svg.plot path.exp-sim2{stroke:#de8a1c;stroke-width:1.3;stroke-dasharray:5 4}
svg.plot .bar-data{fill:#cdd4de;stroke:none}
svg.plot .bar-count{fill:#e4dcc6;fill-opacity:.75;stroke:none}
svg.plot .band-acceptable{fill:#dcf1e2;stroke:none}
svg.plot .band-marginal{fill:#fcefd0;stroke:none}
svg.plot .m-data circle{fill:#111}
svg.plot .m-model circle{fill:#d0343c}
svg.plot .m-sim circle{fill:#3d74b8}
svg.plot .m-sim2 circle{fill:#de8a1c}
@media (max-width:640px){.wrap{padding:0 14px}.plots{grid-template-columns:1fr}}
`
