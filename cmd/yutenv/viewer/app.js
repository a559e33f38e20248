// yutenv viewer: steps through one recorded game served by `yutenv view`.
// Everything comes from the same local server: game.json (every position in
// the documented JSON form) and board/P.svg (the board at position P).
// Position 0 is the start; position P is the state after step P-1.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const throwNames = ['back-do', 'do', 'gae', 'geol', 'yut', 'mo'];
  const boards = new Map();
  let game = null;
  let cur = -1;
  let captured = []; // captured[p][seat]: pieces the seat captured up to position p

  // parseHash reads "#P" and the optional "&keys=K1,K2" (key names pressed
  // once the page is up, for scripted walks through a game).
  function parseHash() {
    let pos = null;
    let keys = [];
    for (const part of location.hash.replace(/^#/, '').split('&')) {
      if (/^\d+$/.test(part)) {
        pos = parseInt(part, 10);
      } else if (part.startsWith('keys=')) {
        keys = decodeURIComponent(part.slice(5)).split(',').filter(Boolean);
      }
    }
    return { pos, keys };
  }

  function board(p) {
    if (!boards.has(p)) {
      boards.set(p, fetch('board/' + p + '.svg').then((r) => {
        if (!r.ok) throw new Error('board ' + p + ': HTTP ' + r.status);
        return r.text();
      }));
    }
    return boards.get(p);
  }

  function seatCounts(state, seat) {
    const c = { hand: 0, board: 0, finished: 0 };
    for (const piece of state.pieces) {
      if (piece.seat === seat) c[piece.status] += 1;
    }
    return c;
  }

  function cell(text, cls) {
    const td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    return td;
  }

  function showCounts(p) {
    const state = game.positions[p].state;
    const body = $('counts').tBodies[0];
    body.textContent = '';
    for (let seat = 0; seat < game.seats; seat++) {
      const c = seatCounts(state, seat);
      const place = state.places[seat] || 0;
      const tr = document.createElement('tr');
      tr.className = 'seat-row' + (state.phase !== 'over' && state.to_move === seat ? ' to-move' : '');
      tr.dataset.seat = String(seat);
      tr.dataset.hand = String(c.hand);
      tr.dataset.board = String(c.board);
      tr.dataset.finished = String(c.finished);
      tr.dataset.captured = String(captured[p][seat]);
      tr.dataset.place = String(place);
      const sw = document.createElement('span');
      sw.className = 'swatch';
      sw.style.backgroundColor = game.colors[seat] || '#888';
      const first = document.createElement('td');
      first.appendChild(sw);
      tr.appendChild(first);
      tr.appendChild(cell(String(seat) + ' (' + String.fromCharCode(65 + seat) + ')'));
      tr.appendChild(cell(game.players[seat] || ''));
      tr.appendChild(cell(String(c.hand), 'hand'));
      tr.appendChild(cell(String(c.board), 'board'));
      tr.appendChild(cell(String(c.finished), 'finished'));
      tr.appendChild(cell(String(captured[p][seat]), 'captured'));
      tr.appendChild(cell(place ? String(place) : '', 'place'));
      body.appendChild(tr);
    }
  }

  function describe(p) {
    const line = game.positions[p];
    if (!line.event) {
      return 'start: seat ' + line.state.to_move + ' to throw';
    }
    return 'step ' + line.step + ': ' + line.event.text;
  }

  function showPool(p) {
    const state = game.positions[p].state;
    const names = [];
    state.pool.forEach((n, t) => { for (let k = 0; k < n; k++) names.push(throwNames[t]); });
    let who;
    if (state.phase === 'over') {
      who = state.winner >= 0 ? 'game over: seat ' + state.winner + ' wins' : 'game over';
    } else {
      who = 'seat ' + state.to_move + ' to ' + state.phase;
    }
    $('pool').textContent = who + '; pool: ' + (names.length ? names.join(', ') : 'empty');
  }

  async function go(p) {
    const n = game.positions.length;
    p = Math.max(0, Math.min(n - 1, Number.isFinite(p) ? Math.trunc(p) : 0));
    const prev = cur;
    cur = p;
    document.body.dataset.ready = '0';
    document.body.dataset.pos = String(p);
    $('slider').value = String(p);
    $('pos').textContent = 'position ' + p + ' of ' + (n - 1);
    $('event').textContent = describe(p);
    showCounts(p);
    showPool(p);
    const list = $('moves');
    if (prev >= 0 && list.children[prev]) {
      list.children[prev].classList.remove('current');
      list.children[prev].removeAttribute('aria-current');
    }
    const li = list.children[p];
    if (li) {
      li.classList.add('current');
      li.setAttribute('aria-current', 'step');
      li.scrollIntoView({ block: 'nearest' });
    }
    history.replaceState(null, '', '#' + p);
    try {
      const svg = await board(p);
      if (cur === p) {
        $('board').innerHTML = svg;
        document.body.dataset.ready = '1';
      }
    } catch (e) {
      $('error').textContent = String(e);
    }
  }

  // nextMove finds the next position in direction dir reached by a move, not a throw.
  function nextMove(from, dir) {
    const n = game.positions.length;
    for (let q = from + dir; q >= 0 && q < n; q += dir) {
      const ev = game.positions[q].event;
      if (ev && ev.kind === 'move') return q;
    }
    return dir > 0 ? n - 1 : 0;
  }

  function onKey(e) {
    if (!game || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.target && e.target.id === 'slider') return; // the slider moves itself and fires input
    const n = game.positions.length;
    let p;
    switch (e.key) {
      case 'ArrowRight': p = cur + 1; break;
      case 'ArrowLeft': p = cur - 1; break;
      case 'ArrowDown': p = nextMove(cur, 1); break;
      case 'ArrowUp': p = nextMove(cur, -1); break;
      case 'PageDown': p = cur + 10; break;
      case 'PageUp': p = cur - 10; break;
      case 'Home': p = 0; break;
      case 'End': p = n - 1; break;
      default: return;
    }
    e.preventDefault();
    go(p);
  }

  function buildMoves() {
    const list = $('moves');
    game.positions.forEach((line, p) => {
      const li = document.createElement('li');
      li.dataset.pos = String(p);
      li.value = line.step;
      if (!line.event) {
        li.className = 'start';
        li.textContent = 'start: seat ' + line.state.to_move + ' to throw';
      } else {
        li.className = line.event.kind + (line.event.captured ? ' capture' : '');
        li.textContent = line.event.text;
      }
      li.addEventListener('click', () => go(p));
      list.appendChild(li);
    });
  }

  function computeCaptured() {
    let acc = new Array(game.seats).fill(0);
    captured = game.positions.map((line) => {
      if (line.event && line.event.captured) {
        acc = acc.slice();
        acc[line.event.seat] += line.event.captured;
      }
      return acc;
    });
  }

  function showMeta() {
    const parts = [game.file, 'game ' + game.game + ' (' + game.games + ' in the file)', 'rules ' + game.rules, 'seed ' + game.seed];
    if (game.players.length) {
      parts.push(game.players.map((name, seat) => seat + ': ' + name).join(', '));
    }
    if (game.result) {
      parts.push('seat ' + game.result.winner + ' won');
    }
    $('meta').textContent = parts.join(' \u00b7 ');
    document.title = 'yutenv viewer: ' + game.file + ' game ' + game.game;
  }

  async function main() {
    try {
      const r = await fetch('game.json');
      if (!r.ok) throw new Error('game.json: HTTP ' + r.status);
      game = await r.json();
    } catch (e) {
      $('meta').textContent = '';
      $('error').textContent = 'could not load the game: ' + e;
      return;
    }
    showMeta();
    computeCaptured();
    buildMoves();
    const slider = $('slider');
    slider.max = String(game.positions.length - 1);
    slider.addEventListener('input', () => go(parseInt(slider.value, 10)));
    $('first').addEventListener('click', () => go(0));
    $('prev').addEventListener('click', () => go(cur - 1));
    $('next').addEventListener('click', () => go(cur + 1));
    $('last').addEventListener('click', () => go(game.positions.length - 1));
    document.addEventListener('keydown', onKey);
    window.addEventListener('hashchange', () => {
      const h = parseHash();
      if (h.pos !== null && h.pos !== cur) go(h.pos);
    });
    const h = parseHash();
    await go(h.pos === null ? 0 : h.pos);
    for (const key of h.keys) {
      document.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
    }
    await board(cur);
  }

  main();
})();
