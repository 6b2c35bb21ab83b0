// libp2p v3 and helia v7 call Promise.withResolvers, which Node 20 lacks. Every entry point
// (bin, daemon, tests, benches) imports this module before anything else.
type Resolvers<T> = { promise: Promise<T>; resolve: (value: T | PromiseLike<T>) => void; reject: (reason?: unknown) => void }

const P = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> }
if (typeof P.withResolvers !== 'function') {
  P.withResolvers = function withResolvers<T> (): Resolvers<T> {
    let resolve!: Resolvers<T>['resolve']
    let reject!: Resolvers<T>['reject']
    const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej })
    return { promise, resolve, reject }
  }
}

export {}
