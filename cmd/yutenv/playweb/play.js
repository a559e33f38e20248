// yutenv play --web: one game against the server's agents. The server holds
// the game (the JSON API of docs/PLAY.md); this page shows the board, lists
// the player's legal moves as buttons, announces the throws and keeps the log.
// The game's id is in the URL (#game=ID), so a reload shows the same game.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  // How many sticks land flat side up for each throw (back-do: the marked one).
  const flats = { 'back-do': 1, do: 1, gae: 2, geol: 3, yut: 4, mo: 0 };
  let view = null;
  let busy = false;
  let hovered = null; // the move whose preview is wanted, if any

  // The game the URL names (#game=ID), or null.
  function gameInURL() {
    const m = /^#(?:.*&)?game=([0-9a-f]+)(?:&|$)/.exec(location.hash);
    return m ? m[1] : null;
  }

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
    delete document.body.dataset.replaced;
    showBoard(v.board);
    showLog(before);
    // Announce the last throw of the player's own, or else the last throw.
    let last = null;
    for (let i = v.log.length - 1; i >= 0 && i >= before; i--) {
      if (v.log[i].kind === 'throw') { last = v.log[i]; break; }
    }
    if (last || before === 0) showThrow(last);
    showMoves();
    $('meta').textContent = 'rules ' + v.rules + ' \u00b7 seed ' + v.seed + ' \u00b7 ' + v.lineup;
    $('status').textContent = v.status;
    $('error').textContent = '';
    $('legend-sticks').textContent = v.legend.sticks;
    $('legend-board').textContent = v.legend.board;
    if (gameInURL() !== v.id) history.replaceState(null, '', '#game=' + v.id);
  }

  // call sends a request and shows the game it answers; it returns the
  // HTTP status (0 when the server could not be reached).
  async function call(method, url, body) {
    busy = true;
    setPhase();
    for (const b of document.querySelectorAll('#moves button, #new-game')) b.disabled = true;
    let status = 0;
    try {
      const init = { method };
      if (body !== undefined) {
        init.headers = { 'Content-Type': 'application/json' };
        init.body = JSON.stringify(body);
      }
      const r = await fetch(url, init);
      status = r.status;
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
    return status;
  }

  function play(action) {
    if (busy || !view) return;
    call('POST', 'api/games/' + view.id + '/moves', { action });
  }

  function newGame() {
    if (busy) return;
    call('POST', 'api/games', {});
  }

  // load shows the game the URL names, or starts one. A game the server no
  // longer has (dropped for newer games, or the server was restarted) is
  // replaced by a new game, and the status line says so.
  async function load() {
    const id = gameInURL();
    if (id === null) { await call('POST', 'api/games', {}); return; }
    if (view && view.id === id) return;
    const status = await call('GET', 'api/games/' + id); // a GET starts no work
    if (status !== 404) return;
    if (await call('POST', 'api/games', {}) !== 201) return;
    $('status').textContent = 'The game in the address is no longer on the server (it was dropped for newer games, ' +
      'or the server was restarted), so this is a new game. ' + view.status;
    document.body.dataset.replaced = id;
  }

  $('new-game').addEventListener('click', newGame);
  // An address naming another game (typed or pasted) shows that game.
  window.addEventListener('hashchange', () => {
    const id = gameInURL();
    if (!busy && id !== null && (!view || view.id !== id)) load();
  });
  load();
})();
