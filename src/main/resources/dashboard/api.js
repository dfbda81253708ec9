// The control-plane client: every call goes to this page's own origin and carries the bearer token
// once the operator has typed it in. A 401 opens the token prompt and retries the call with the new
// token. The token lives in sessionStorage: it survives a reload, not the closing of the tab.

const TOKEN_KEY = 'nexuscore.token';
const RETRY_MS = 2000;

let pendingPrompt = null;
// Set when the operator cancels the prompt: calls then fail at once instead of asking again every
// poll; the Token button (askToken with force) or a new token clears it.
let declined = false;
const authListeners = [];

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  declined = false;
  if (value) {
    sessionStorage.setItem(TOKEN_KEY, value);
  } else {
    sessionStorage.removeItem(TOKEN_KEY);
  }
  authListeners.forEach((listener) => listener(Boolean(value)));
}

export function onAuthChange(listener) {
  authListeners.push(listener);
  listener(Boolean(token()));
}

function headers(extra) {
  const h = Object.assign({}, extra);
  const t = token();
  if (t) {
    h.Authorization = 'Bearer ' + t;
  }
  return h;
}

/**
 * Shows the token dialog; resolves when the operator submits a token, rejects on cancel. Calls that
 * get a 401 while the dialog is open all wait for the same answer.
 */
export function askToken(reason, force) {
  if (pendingPrompt) {
    return pendingPrompt;
  }
  if (declined && !force) {
    return Promise.reject(new Error('no token (use the Token… button)'));
  }
  const dialog = document.getElementById('token-dialog');
  const input = document.getElementById('token-input');
  document.getElementById('token-reason').textContent = reason;
  input.value = '';
  pendingPrompt = new Promise((resolve, reject) => {
    const form = document.getElementById('token-form');
    const cancel = document.getElementById('token-cancel');
    const done = (ok) => {
      form.removeEventListener('submit', onSubmit);
      cancel.removeEventListener('click', onCancel);
      dialog.removeEventListener('cancel', onCancel);
      if (dialog.open) {
        dialog.close();
      }
      pendingPrompt = null;
      declined = !ok;
      ok ? resolve() : reject(new Error('no token given'));
    };
    const onSubmit = (e) => {
      e.preventDefault();
      setToken(input.value.trim());
      done(true);
    };
    const onCancel = (e) => {
      e.preventDefault();
      done(false);
    };
    form.addEventListener('submit', onSubmit);
    cancel.addEventListener('click', onCancel);
    dialog.addEventListener('cancel', onCancel);
  });
  dialog.showModal();
  input.focus();
  return pendingPrompt;
}

/** The problem+json detail of an error answer, or its status line. */
export async function problemText(response) {
  try {
    const p = await response.json();
    return (p.title || response.status) + (p.detail ? ': ' + p.detail : '') + (p.field ? ' (' + p.field + ')' : '');
  } catch (e) {
    return response.status + ' ' + response.statusText;
  }
}

async function why401(response) {
  const detail = await problemText(response);
  return token() ? 'The token was refused (' + detail + '). Enter the right one.'
    : 'This call needs the control plane\'s bearer token (' + detail + ').';
}

/** One API call; on 401 asks for the token and tries again. Resolves to the Response. */
export async function call(method, path, body) {
  for (;;) {
    const init = { method, headers: headers(), cache: 'no-store', credentials: 'omit' };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/merge-patch+json';
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    if (response.status !== 401) {
      return response;
    }
    await askToken(await why401(response));
  }
}

/** GET path as JSON; throws with the problem text on an error answer. */
export async function getJson(path) {
  const response = await call('GET', path);
  if (!response.ok) {
    const error = new Error(await problemText(response));
    error.status = response.status;
    throw error;
  }
  return response.json();
}

/** One SSE frame ("id:", "event:", "data:" lines; ":" comments) as {id, type, data}, or null. */
export function parseFrame(frame) {
  let id = null;
  let type = 'message';
  const data = [];
  for (const line of frame.split('\n')) {
    if (line === '' || line.startsWith(':')) {
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) {
      value = value.slice(1);
    }
    if (field === 'id') {
      id = value;
    } else if (field === 'event') {
      type = value;
    } else if (field === 'data') {
      data.push(value);
    }
  }
  if (data.length === 0) {
    return null;
  }
  let parsed;
  try {
    parsed = JSON.parse(data.join('\n'));
  } catch (e) {
    parsed = { unparsed: data.join('\n') };
  }
  return { id, type, data: parsed };
}

/**
 * Reads GET /events for as long as the page lives, with fetch and a stream reader (EventSource
 * cannot send the Authorization header). The first connection asks for the server's history
 * (Last-Event-ID 0); a reconnection resumes after the last id seen.
 */
export async function streamEvents(onEvent, onState) {
  let lastId = '0';
  for (;;) {
    try {
      const response = await fetch('/events', {
        headers: headers({ Accept: 'text/event-stream', 'Last-Event-ID': lastId }),
        cache: 'no-store',
        credentials: 'omit',
      });
      if (response.status === 401) {
        onState('needs token');
        await askToken(await why401(response));
        continue;
      }
      if (!response.ok) {
        throw new Error('GET /events: ' + await problemText(response));
      }
      onState('live');
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          break;
        }
        buffer += value.replace(/\r\n?/g, '\n');
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = parseFrame(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (event) {
            if (event.id !== null) {
              lastId = event.id;
            }
            onEvent(event);
          }
        }
      }
      onState('reconnecting (stream ended)');
    } catch (e) {
      onState('reconnecting (' + e.message + ')');
    }
    await new Promise((r) => setTimeout(r, RETRY_MS));
  }
}
