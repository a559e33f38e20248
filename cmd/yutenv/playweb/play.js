// yutenv play --web: one game against the server's agents. The server holds
// the game (the JSON API of docs/PLAY.md); this page shows the board, lists
// the player's legal moves as buttons, announces the throws and keeps the log.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  // How many sticks land flat side up for each throw (back-do: the marked one).
  const flats = { 'back-do': 1, do: 1, gae: 2, geol: 3, yut: 4, mo: 0 };
  let view = null;
  let busy = false;
  let hovered = null; // the move whose preview is wanted, if any

  function setPhase() {
    const b = document.body.dataset;
    if (!view) { b.phase = 'loading'; return; }
    b.game = view.id;
    b.rules = view.rules;
    b.seed = String(view.seed);
    b.start = String(view.start);
    b.seat = String(view.seat);
    b.decisions = String(view.log.filter((e) => e.kind === 'move').length);
    b.winner = String(view.state.winner);
    if (busy) b.phase = 'busy';
    else if (view.state.phase === 'over') b.phase = 'over';
    else b.phase = view.moves.length ? 'you' : 'wait';
  }

  function showThrow(entry) {
    const sticks = $('sticks');
    sticks.textContent = '';
    if (!entry) { $('throw-text').textContent = ''; return; }
    const n = flats[entry.throw];
    for (let k = 0; k < 4; k++) {
      const s = document.createElement('span');
      // The marked stick is the first; back-do is it alone flat side up.
      const flat = entry.throw === 'back-do' ? k === 0 : (k >= 4 - n);
      s.className = 'stick ' + (flat ? 'flat' : 'round') + (k === 0 ? ' marked' : '');
      s.style.animationDelay = (k * 0.07) + 's';
      sticks.appendChild(s);
    }
    $('throw-text').textContent = entry.say;
  }

  function showLog(from) {
    const log = $('log');
    if (from === 0) log.textContent = '';
    for (let i = from; i < view.log.length; i++) {
      const e = view.log[i];
      const li = document.createElement('li');
      li.className = e.kind + (e.seat === view.seat ? ' mine' : '') + (e.captured ? ' capture' : '');
      li.dataset.i = String(i);
      li.dataset.kind = e.kind;
      li.dataset.seat = String(e.seat);
      li.dataset.throw = e.throw;
      if (e.kind === 'move') li.dataset.action = String(e.action);
      li.textContent = e.say;
      log.appendChild(li);
    }
    log.scrollTop = log.scrollHeight;
  }

  function showBoard(svg) {
    $('board').innerHTML = svg;
  }

  async function preview(action) {
    if (busy || !view) return;
    // A reply is shown only if the pointer is still on its move and the
    // position is still the one it was asked for: one that comes back after
    // the move was played, a new game started or the pointer left is stale.
    const asked = view;
    hovered = action;
    const current = () => view === asked && hovered === action && !busy;
    try {
      const r = await fetch('api/games/' + asked.id + '/preview/' + action);
      if (!r.ok || !current()) return;
      const svg = await r.text();
      if (!current()) return;
      showBoard(svg);
      document.body.dataset.preview = String(action);
    } catch (e) { /* the plain board stays */ }
  }

  function unpreview() {
    hovered = null;
    if (view && document.body.dataset.preview) {
      delete document.body.dataset.preview;
      showBoard(view.board);
    }
  }

  function showMoves() {
    const list = $('moves');
    list.textContent = '';
    for (const m of view.moves) {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.action = String(m.action);
      b.dataset.to = String(m.to);
      if (m.from !== undefined) b.dataset.from = String(m.from);
      if (m.entered) b.dataset.entered = '1';
      b.textContent = m.text;
      b.addEventListener('mouseenter', () => preview(m.action));
      b.addEventListener('focus', () => preview(m.action));
      b.addEventListener('mouseleave', unpreview);
      b.addEventListener('blur', unpreview);
      b.addEventListener('click', () => play(m.action));
      li.appendChild(b);
      list.appendChild(li);
    }
  }

  function show(v) {
    const before = view && view.id === v.id ? view.log.length : 0;
    view = v;
    delete document.body.dataset.preview;
    showBoard(v.board);
    showLog(before);
    // Announce the last throw of the player's own, or else the last throw.
    let last = null;
    for (let i = v.log.length - 1; i >= 0 && i >= before; i--) {
      if (v.log[i].kind === 'throw') { last = v.log[i]; break; }
    }
    if (last || before === 0) showThrow(last);
    showMoves();
    const names = v.players.map((n, s) => String.fromCharCode(65 + s) + ': ' + n).join(', ');
    $('meta').textContent = 'rules ' + v.rules + ' \u00b7 seed ' + v.seed + ' \u00b7 ' + names;
    $('status').textContent = v.status;
    $('error').textContent = '';
  }

  async function call(method, url, body) {
    busy = true;
    setPhase();
    for (const b of document.querySelectorAll('#moves button, #new-game')) b.disabled = true;
    try {
      const r = await fetch(url, {
        method, headers: { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
      });
      const data = await r.json();
      if (!r.ok) throw new Error(data.error || ('HTTP ' + r.status));
      busy = false;
      show(data);
    } catch (e) {
      $('error').textContent = String(e.message || e);
    } finally {
      busy = false;
      $('new-game').disabled = false;
      for (const b of document.querySelectorAll('#moves button')) b.disabled = false;
      setPhase();
    }
  }

  function play(action) {
    if (busy || !view) return;
    call('POST', 'api/games/' + view.id + '/moves', { action });
  }

  function newGame() {
    if (busy) return;
    call('POST', 'api/games', {});
  }

  $('new-game').addEventListener('click', newGame);
  newGame();
})();
