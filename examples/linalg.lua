-- nd.linalg in two everyday jobs: a least-squares line fit, and inverting
-- many 4x4 transforms at once (as a game engine does per frame).
-- Run: bin/nd examples/linalg.lua
local nd = require "nd"
local L = nd.linalg

-- 1. Fit y = a + b x through noisy points: least squares, three ways.
nd.manual_seed(1)
local x = nd.linspace(0, 10, 50)
local y = x * 2 + 1 + nd.randn(50) * 0.1
local X = nd.stack({ nd.ones(50), x }, 2)              -- (50, 2) design matrix
local fit = L.lstsq(X, y)                              -- gelsd, minimum norm
local Xt = X:t()                                       -- a view: no copy
local normal = L.solve(Xt:matmul(X), Xt:matmul(y))     -- normal equations
local C = L.cholesky(Xt:matmul(X))                     -- or by Cholesky
print(("lstsq: a = %.4f, b = %.4f"):format(fit[1], fit[2]))
print(("solve: a = %.4f, b = %.4f"):format(normal[1], normal[2]))
print("cholesky factor of X^T X:", C)

-- 2. 10,000 rigid transforms (rotation about z, then a translation),
-- inverted in one call by the unrolled 4x4 kernel.
local n = 10000
local T = nd.zeros(n, 4, 4, "float32")
local angle = nd.rand(n, "float32") * (2 * math.pi)
T[{ {}, 1, 1 }] = angle:cos(); T[{ {}, 1, 2 }] = -angle:sin()
T[{ {}, 2, 1 }] = angle:sin(); T[{ {}, 2, 2 }] = angle:cos()
T[{ {}, 3, 3 }] = 1; T[{ {}, 4, 4 }] = 1
T[{ {}, { 1, 3 }, 4 }] = nd.randn(n, 3, "float32")
local Ti = L.inv(T)
local err = (T:matmul(Ti) - nd.eye(4, 4, "float32")):abs():max()
print(("inverted %d transforms; max |T inv(T) - I| = %.2g"):format(n, err))
print("det of the first (a rotation: 1):", L.det(T[1]))
print("what inv does for them:", L.plan("inv", T).routine)
