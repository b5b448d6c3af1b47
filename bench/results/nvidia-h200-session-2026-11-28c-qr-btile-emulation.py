# Emulates cuda/qr_btile.cuh's algorithm (usual dlarfg path + x == 0 case) per thread in numpy.
import numpy as np
def btile_r(A, M):
    m, n = A.shape
    G = 16; S = M // G; W = G * G // 32; RPW = 32 // G; KV = 4; SP = -(-S // KV) * KV
    a = np.zeros((G, G, S, S))      # [rg, cg, s, t]
    for rg in range(G):
        for cg in range(G):
            for s in range(S):
                for t in range(S):
                    i, c = rg + G * s, cg + G * t
                    a[rg, cg, s, t] = A[i, c] if i < m and c < n else 0
    for J in range(S):
        steps = min(G, n - G * J)
        for cj in range(max(steps, 0)):
            j = G * J + cj
            u = np.full(G * SP, np.nan)  # slot: position rg*SP+s
            part = np.zeros((G, G))
            alpha = None
            for rg in range(G):
                cg = cj
                for s in range(SP):
                    if (s // KV + 1) * KV <= J:  # vector fully dead: not written (stale)
                        continue
                    x = a[rg, cg, s, J] if s < S and (s > J or (s == J and rg > cj)) else 0.0
                    u[rg * SP + s] = x
                    part[rg, cg] += x * x
                if rg == cj:
                    alpha = a[rg, cg, J, J]
            # warp sums: warp w holds rg in [w*RPW, (w+1)*RPW)
            norms = [sum(part[w * RPW + k, cj] for k in range(RPW)) for w in range(W)]
            xn2 = sum(norms)
            s2 = alpha * alpha + xn2
            if j + 1 == m:
                kappa, uj, beta, scale = 0.0, 1.0, alpha, 1.0
            elif xn2 > 0:
                beta = -np.copysign(np.sqrt(s2), alpha)
                kappa, uj, scale = 1.0 / (beta * (beta - alpha)), alpha - beta, 1.0
            else:
                kappa, uj, beta, scale = 0.0, 1.0, alpha, 1.0
            if j + 1 < n:
                d = np.zeros((G, G, S))
                uu_all = {}
                for rg in range(G):
                    for cg in range(G):
                        uu = np.zeros(S)
                        for s in range(S):
                            if (s // KV + 1) * KV <= J: continue
                            uu[s] = u[rg * SP + s]
                        for s in range(J, S): uu[s] *= scale
                        if rg == cj: uu[J] = uj
                        uu_all[rg, cg] = uu
                        for t in range(J, S):
                            d[rg, cg, t] = sum(uu[s] * a[rg, cg, s, t] for s in range(J, S))
                for rg in range(G):
                    for cg in range(G):
                        uu = uu_all[rg, cg]
                        for t in range(J, S):
                            tot = sum(d[r2, cg, t] for r2 in range(G))
                            w = kappa * tot if (t > J or cg > cj) else 0.0
                            for s in range(J, S):
                                a[rg, cg, s, t] -= w * uu[s]
            a[cj, cj, J, J] = beta
    R = np.zeros((n, n))
    for rg in range(G):
        for cg in range(G):
            for s in range(S):
                for t in range(S):
                    i, c = rg + G * s, cg + G * t
                    if i < n and c < n:
                        R[i, c] = a[rg, cg, s, t] if i <= c else 0
    return R
rng = np.random.default_rng(0)
for (m, n, M) in [(48, 48, 48), (40, 20, 48), (33, 33, 48), (64, 64, 64), (65, 65, 80), (72, 72, 80), (100, 37, 112), (96, 96, 96), (128, 128, 128), (128, 100, 128), (104, 104, 112)]:
    A = rng.standard_normal((m, n))
    if n > 5: A[:, 3] = 0  # a zero column
    R = btile_r(A, M)
    Rref = np.linalg.qr(A, mode='r')
    err = np.abs(R - Rref).max() / np.abs(Rref).max()
    print(m, n, M, "max rel err vs numpy", err)
