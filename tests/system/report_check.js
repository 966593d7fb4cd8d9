#!/usr/bin/env node
// Render bundles' report.html in headless Chromium and check them in the DOM.
//
//   node report_check.js REPORT.html MANIFEST.json SCREENSHOT.png [--full]
//   node report_check.js --jobs JOBS.json
//
// JOBS.json is an array of {label, report, manifest, shot, full}: each is
// rendered in its own tab of one browser, one after another (a browser's
// start is most of a small report's 3 s), and each check line is prefixed
// with its job's label.
//
// Drives Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe:
// fd 3 to the browser, fd 4 from it, NUL-separated JSON), so it needs nothing
// but node and the Debian chromium package. Prints one line per check,
// "ok - ..." or "FAIL - ...", and exits 1 when any check failed. Always:
// the page loads, nothing but the file itself was requested, no console
// error, no script, the verdict text is the manifest's, one port and one vport
// series per port. With --full also: the stall band, every action's band
// and the release marker sit where the manifest's times put them on the
// panel's time axis (measured on the rendered elements, 1.5 px tolerance).
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');
const os = require('os');

const argv = process.argv.slice(2);
const jobs = argv[0] === '--jobs'
  ? JSON.parse(fs.readFileSync(argv[1], 'utf8'))
  : [{ label: '', report: argv[0], manifest: argv[1], shot: argv[2], full: argv[3] === '--full' }];
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'report-chromium-'));
let failed = 0;
let prefix = '';  // the job's label, with ": "
const ok = (what) => console.log(`ok - ${prefix}${what}`);
const fail = (what) => { failed++; console.log(`FAIL - ${prefix}${what}`); };
const check = (what, cond, detail) => (cond ? ok(what) : fail(detail ? `${what}: ${detail}` : what));

const browser = spawn(chromium, [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-extensions',
  '--disable-default-apps', '--mute-audio', `--user-data-dir=${profile}`,
  '--remote-debugging-pipe', 'about:blank',
  // its own process group: the helpers (zygote, renderer, utility) go with
  // it at the end, and no longer write into the profile while it is removed
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: true });
let stderr = '';
browser.stderr.on('data', (d) => { stderr += d; });
// the browser with its helpers (their group is not ours: detached)
const killBrowser = () => {
  try { process.kill(-browser.pid, 'SIGKILL'); } catch (e) { browser.kill('SIGKILL'); }
};
// timeout(1) or the test's cleanup ends us with SIGTERM: the browser goes
// here, with its profile
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(sig, () => {
    killBrowser();
    console.log(`FAIL - rendering ended by ${sig} (timed out?)`);
    setTimeout(() => {
      try { fs.rmSync(profile, { recursive: true, force: true }); } catch (e) { /* best effort */ }
      process.exit(1);
    }, 200);
  });
}
// a browser that exits (crashed) answers nothing more: every call waiting
// fails, and so does each job after it, at once
let browserGone = null;
browser.on('exit', (code, sig) => {
  browserGone = new Error(`the browser exited (${sig || `status ${code}`})`);
  for (const { reject } of pending.values()) reject(browserGone);
  pending.clear();
});
const toBrowser = browser.stdio[3];
const fromBrowser = browser.stdio[4];
let nextId = 1;
const pending = new Map();
const listeners = [];
let buf = Buffer.alloc(0);
fromBrowser.on('data', (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  let i;
  while ((i = buf.indexOf(0)) >= 0) {
    const msg = JSON.parse(buf.subarray(0, i).toString('utf8'));
    buf = buf.subarray(i + 1);
    if (msg.id && pending.has(msg.id)) {
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) reject(new Error(JSON.stringify(msg.error)));
      else resolve(msg.result);
    } else if (msg.method) {
      for (const l of listeners) l(msg);
    }
  }
});
function send(method, params = {}, sessionId) {
  if (browserGone) return Promise.reject(browserGone);
  const id = nextId++;
  const m = { id, method, params };
  if (sessionId) m.sessionId = sessionId;
  toBrowser.write(JSON.stringify(m) + '\0');
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
function waitFor(method, ms, sessionId) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no ${method} within ${ms} ms`)), ms);
    listeners.push((m) => {
      if (m.method === method && m.sessionId === sessionId) { clearTimeout(t); resolve(m); }
    });
  });
}

// Everything measured in the page: returns plain data for the checks below.
function measure() {
  const num = (v) => (v === null || v === undefined ? NaN : Number(v));
  const out = { verdict: null, timelines: [], scripts: document.scripts.length,
    externals: [], title: document.title };
  const v = document.getElementById('verdict');
  out.verdict = v ? v.textContent : null;
  for (const el of document.querySelectorAll('[src],[href]')) {
    const u = el.getAttribute('src') || el.getAttribute('href');
    if (/^[a-z][a-z0-9+.-]*:/i.test(u)) out.externals.push(u);
  }
  for (const svg of document.querySelectorAll('svg.timeline')) {
    const vb = svg.viewBox.baseVal, r = svg.getBoundingClientRect();
    const scale = r.width / vb.width;
    const t = { port: svg.dataset.port, series: {}, panels: {}, items: [], scale,
      labelled: !!svg.getAttribute('aria-labelledby') && !!svg.querySelector('title') &&
        !!svg.querySelector('desc') };
    for (const p of svg.querySelectorAll('path.series')) {
      const k = `${p.dataset.panel}/${p.dataset.series}`;
      t.series[k] = (t.series[k] || 0) + (p.getAttribute('d').length > 4 ? 1 : 0);
    }
    for (const g of svg.querySelectorAll('g.panel')) {
      t.panels[g.dataset.panel] = { t0: num(g.dataset.t0Ms), t1: num(g.dataset.t1Ms),
        x0: num(g.dataset.x0), x1: num(g.dataset.x1) };
    }
    for (const e of svg.querySelectorAll('[data-kind]')) {
      const b = e.getBBox(), cr = e.getBoundingClientRect();
      const panel = e.closest('g.panel') ? e.closest('g.panel').dataset.panel :
        (e.dataset.panel || 'investigation');
      t.items.push({ kind: e.dataset.kind, panel: e.dataset.panel || panel, step: e.dataset.step,
        index: num(e.dataset.index), t: num(e.dataset.tMs), x: num(e.dataset.x),
        clipped: e.dataset.clipped === '1', bx: b.x, bw: b.width, sx: (cr.left - r.left) / scale,
        sw: cr.width / scale });
    }
    out.timelines.push(t);
  }
  return out;
}

// one job: a tab of its own, closed at the end
async function checkOne({ report, manifest: manifestPath, shot, full }) {
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  const problems = [];
  const requests = [];
  const url = 'file://' + path.resolve(report);
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  try {
    const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
    listeners.push((m) => {
      if (m.sessionId !== sessionId) return;
      const p = m.params;
      if (m.method === 'Network.requestWillBeSent') requests.push(p.request.url);
      if (m.method === 'Runtime.consoleAPICalled' && (p.type === 'error' || p.type === 'assert'))
        problems.push(`console.${p.type}: ${p.args.map((a) => a.value || a.description).join(' ')}`);
      if (m.method === 'Runtime.exceptionThrown')
        problems.push(`exception: ${p.exceptionDetails.text}`);
      if (m.method === 'Log.entryAdded' && p.entry.level === 'error')
        problems.push(`log: ${p.entry.source}: ${p.entry.text}`);
    });
    for (const d of ['Page', 'Network', 'Runtime', 'Log']) await send(`${d}.enable`, {}, sessionId);
    await send('Emulation.setDeviceMetricsOverride',
      { width: 1100, height: 1000, deviceScaleFactor: 1, mobile: false }, sessionId);
    const loaded = waitFor('Page.loadEventFired', 20000, sessionId);
    await send('Page.navigate', { url }, sessionId);
    await loaded;
    await new Promise((r) => setTimeout(r, 300));
    const res = await send('Runtime.evaluate', { expression: `(${measure.toString()})()`,
      returnByValue: true }, sessionId);
    const d = res.result.value;
    const lm = await send('Page.getLayoutMetrics', {}, sessionId);
    const h = Math.min(Math.ceil(lm.cssContentSize.height), 16000);
    await send('Emulation.setDeviceMetricsOverride',
      { width: 1100, height: h, deviceScaleFactor: 1, mobile: false }, sessionId);
    const png = await send('Page.captureScreenshot', { format: 'png' }, sessionId);
    fs.writeFileSync(shot, Buffer.from(png.data, 'base64'));

    const others = requests.filter((u) => u !== url);
    check('nothing but the file itself was requested', others.length === 0, others.join(', '));
    check('no console error', problems.length === 0, problems.join(' | '));
    check('no script in the page', d.scripts === 0, `${d.scripts} scripts`);
    check('no link or source outside the page and the bundle', d.externals.length === 0,
      d.externals.join(', '));
    const want = manifest.verdict && manifest.verdict.verdict;
    check(`the verdict text is the manifest's (${want})`, d.verdict === want, `page says ${d.verdict}`);
    check(`screenshot written (${h} px tall)`, fs.statSync(shot).size > 10000);
    const ports = Object.keys(manifest.ports || {});
    check(`one timeline per port (${ports.join(', ')})`,
      ports.every((p) => d.timelines.some((t) => t.port === p)));
    for (const t of d.timelines) {
      check(`${t.port}: the timeline has a title and a description`, t.labelled);
      for (const s of ['port', 'vport'])
        check(`${t.port}: one ${s} series in the investigation panel`,
          t.series[`investigation/${s}`] >= 1, JSON.stringify(t.series));
    }
    if (!full) return;

    // where the manifest's times must be drawn
    const steps = manifest.steps || [];
    // waited_ms as nicstall-bundle(5) reads it: a number of at most 1e9 ms
    const waited = (((manifest.facts || {}).flows || {}).list || [])
      .map((f) => f.waited_ms).filter((w) => Number.isFinite(w) && Math.abs(w) < 1e9);
    const stallT0 = -Math.max(...waited);
    const rel = manifest.release || {};
    const actionStep = { reprogram: 'reprogram', capture: 'capture',
      'promisc-capture': 'capture-promisc' }[rel.action];
    const cand = steps.filter((s) => s.step === actionStep);
    const base = rel.action === 'reprogram' ? cand[cand.length - 1] : cand[0];
    // the release time: at_ms (since #10), else the releasing step plus after_ms
    const relT = Number.isFinite(rel.at_ms) ? rel.at_ms
      : base ? base.start_ms + rel.after_ms : (rel.action === 'self' ? rel.after_ms : NaN);
    const X = (p, tm) => p.x0 + (Math.min(Math.max(tm, p.t0), p.t1) - p.t0) / (p.t1 - p.t0) * (p.x1 - p.x0);
    const near = (a, b) => Math.abs(a - b) <= 1.5;
    for (const t of d.timelines) {
      const B = t.panels.investigation;
      check(`${t.port}: the investigation panel has its time axis`, B && B.t1 > B.t0);
      if (!B) continue;
      const stall = t.items.filter((i) => i.kind === 'stall' && i.panel === 'investigation');
      if (waited.length) {
        const e = X(B, stallT0), s = stall[0];
        check(`${t.port}: the stall band starts at ${stallT0.toFixed(1)} ms (x ${e.toFixed(1)})`,
          s && Math.abs(s.t - stallT0) < 0.01 && near(s.bx, e) && near(s.sx, e),
          s ? `drawn at t ${s.t}, bbox x ${s.bx.toFixed(1)}, on screen ${s.sx.toFixed(1)}` : 'no band');
        const A = t.panels.recorder, sa = t.items.find((i) => i.kind === 'stall' && i.panel === 'recorder');
        if (A && sa)
          check(`${t.port}: the stall band in the recorder panel at x ${X(A, stallT0).toFixed(1)}`,
            near(sa.bx, X(A, stallT0)), `drawn at ${sa.bx.toFixed(1)}`);
      }
      let acts = 0, placed = 0;
      const bad = [];
      steps.forEach((s, idx) => {
        if (!['ping', 'capture', 'capture-promisc', 'reprogram'].includes(s.step)) return;
        acts++;
        const it = t.items.find((i) => i.kind === 'action' && i.index === idx);
        const e = X(B, s.start_ms);
        if (it && Math.abs(it.t - s.start_ms) < 0.01 && near(it.bx, e) && near(it.sx, e)) placed++;
        else bad.push(`${s.step}@${s.start_ms}: ${it ? `x ${it.bx.toFixed(1)} vs ${e.toFixed(1)}` : 'missing'}`);
      });
      check(`${t.port}: all ${acts} actions (ping, captures, promiscuous capture, reprogram) ` +
        'at their manifest times', acts > 0 && placed === acts, bad.join('; '));
      if (rel.released) {
        const m = t.items.find((i) => i.kind === 'release');
        const e = X(B, relT);
        check(`${t.port}: the release marker at ${relT.toFixed(1)} ms (x ${e.toFixed(1)})`,
          m && Math.abs(m.t - relT) < 0.01 && near(m.bx + m.bw / 2, e) && near(m.sx + m.sw / 2, e),
          m ? `drawn at t ${m.t}, x ${(m.bx + m.bw / 2).toFixed(1)}` : 'no marker');
      }
    }
  } finally {
    try { await send('Target.closeTarget', { targetId }); } catch (e) { /* gone with the browser */ }
  }
}

(async () => {
  try {
    for (const job of jobs) {
      prefix = job.label ? `${job.label}: ` : '';
      try {
        await checkOne(job);
      } catch (e) {
        fail(`rendering ${job.report}: ${e.message} ${stderr.split('\n').slice(-5).join(' ')}`);
      }
    }
  } finally {
    try { await Promise.race([send('Browser.close'), new Promise((r) => setTimeout(r, 3000))]); } catch (e) { /* gone */ }
    const exited = new Promise((r) => { if (browser.exitCode !== null) r(); else browser.once('exit', r); });
    killBrowser();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    try {
      fs.rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    } catch (e) { /* a helper process still writing: the directory is a temporary one */ }
    process.exit(failed ? 1 : 0);
  }
})();
