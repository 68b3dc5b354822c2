// WASI interfaces a component may import but is not granted: linked to implementations that
// refuse, so a component whose toolchain imports them (a libc or a language runtime built for WASI
// 0.2 imports wasi:sockets whether the tool uses it or not) still runs, and one that uses them gets
// the interface's own error value. Plain JavaScript, like worker.mjs (worker threads do not run the
// tsx loader). The admission rule that lets these imports in is world.ts; the list is in
// docs/components.md ("Authoring rules").
//
// How jco lowers what an import throws: for a function with a `result`, a thrown non-Error value
// becomes the `err` case (a string for an enum, `{ tag }` for a variant); a thrown Error is not
// lowered and unwinds out of the guest as a trap. Functions without a `result` can only trap.

/** The error a component sees as a trap when it calls something with no error value to refuse with. */
export class NotGrantedError extends Error {
  constructor(what) {
    super(`${what} is not available to component tools (only brain:tool and WASI io, cli, clocks, filesystem, random are granted)`);
    this.name = "NotGrantedError";
  }
}

const trap = (what) => () => {
  throw new NotGrantedError(what);
};

/** A resource class none of whose instances can exist here: every method traps (never reached, since nothing hands one out). */
function unreachableResource(what) {
  return class {
    constructor() {
      throw new NotGrantedError(what);
    }
  };
}

// --- wasi:sockets@0.2.x: every way to a socket or a name lookup answers `access-denied` ---------
class Network {}
const theNetwork = new Network();
const accessDenied = () => {
  throw "access-denied";
};

export const sockets = {
  "wasi:sockets/network": {
    Network,
    // Only errors made by wasi:sockets carry a socket error code; this implementation makes none.
    networkErrorCode: () => undefined,
  },
  // A network resource can be had (the function has no error case); every use of it is refused.
  "wasi:sockets/instance-network": { instanceNetwork: () => theNetwork },
  "wasi:sockets/ip-name-lookup": {
    resolveAddresses: accessDenied,
    ResolveAddressStream: unreachableResource("wasi:sockets/ip-name-lookup resolve-address-stream"),
  },
  "wasi:sockets/tcp-create-socket": { createTcpSocket: accessDenied },
  "wasi:sockets/tcp": { TcpSocket: unreachableResource("wasi:sockets/tcp tcp-socket") },
  "wasi:sockets/udp-create-socket": { createUdpSocket: accessDenied },
  "wasi:sockets/udp": {
    UdpSocket: unreachableResource("wasi:sockets/udp udp-socket"),
    IncomingDatagramStream: unreachableResource("wasi:sockets/udp incoming-datagram-stream"),
    OutgoingDatagramStream: unreachableResource("wasi:sockets/udp outgoing-datagram-stream"),
  },
};

/**
 * wasi:http@0.2.x: `wasi:http/types` (requests, fields, bodies: plain data) comes from the shim so
 * a guest can build a request; sending it is refused with the error-code variant's
 * `HTTP-request-denied`. An imported incoming-handler has no error case: it traps.
 */
export function http(shimTypes) {
  return {
    "wasi:http/types": shimTypes,
    "wasi:http/outgoing-handler": {
      handle: () => {
        throw { tag: "HTTP-request-denied" };
      },
    },
    "wasi:http/incoming-handler": { handle: trap("wasi:http/incoming-handler handle") },
  };
}

/**
 * Any other WASI interface (unknown to this runtime, so no error value is known): every function
 * traps with NotGrantedError naming it. Resource classes are functions too, so `instanceof` works
 * in jco's bindings; `then` is absent so the object is never mistaken for a promise.
 */
export function trapping(iface) {
  const fns = new Map();
  return new Proxy({}, {
    get(_, prop) {
      if (typeof prop !== "string" || prop === "then") return undefined;
      let f = fns.get(prop);
      if (!f) fns.set(prop, (f = trap(`${iface} ${prop}`)));
      return f;
    },
  });
}

/**
 * The import object for a component: `granted` (the shim's WASI, the brain:tool host) as given,
 * wasi:sockets and wasi:http replaced by the refusing implementations above, and every other
 * `wasi:` interface jco asks for answered by `trapping`. Admission (world.ts) already refused any
 * non-WASI import other than brain:tool.
 */
export function withDenials(granted) {
  const base = { ...granted };
  for (const k of Object.keys(base)) if (k.startsWith("wasi:sockets/") || k.startsWith("wasi:http/")) delete base[k];
  Object.assign(base, sockets, http(granted["wasi:http/types"]));
  const made = new Map();
  return new Proxy(base, {
    get(target, key) {
      if (typeof key !== "string" || key in target || !key.startsWith("wasi:")) return target[key];
      let iface = made.get(key);
      if (!iface) made.set(key, (iface = trapping(key)));
      return iface;
    },
  });
}
