// Plain-JS twin of src/polyfill.ts for the js-ipfs daemon child process (ipfs 0.66 calls
// Promise.withResolvers, which Node 20 lacks). Loading it with `--import` instead of running the
// daemon under tsx keeps the daemon's start three times faster.
if (typeof Promise.withResolvers !== 'function') {
  Promise.withResolvers = function withResolvers () {
    let resolve
    let reject
    const promise = new Promise((res, rej) => { resolve = res; reject = rej })
    return { promise, resolve, reject }
  }
}
