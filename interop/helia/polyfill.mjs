// Node 20 lacks Promise.withResolvers (added in Node 22), which js-libp2p 3.x
// and Helia 7 call. Load with: node --import ./polyfill.mjs helia-peer.mjs ...
if (typeof Promise.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers () {
      let resolve
      let reject
      const promise = new this((res, rej) => {
        resolve = res
        reject = rej
      })
      return { promise, resolve, reject }
    }
  })
}
