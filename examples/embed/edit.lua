-- The script both example hosts run (host.c under LuaJIT, host.cpp under
-- Lua 5.4). The host hands over two tensors over its own memory: `image`,
-- an H x W x 4 float32 RGBA image, and `verts`, an N x 3 float32 vertex
-- array. Everything here edits that memory in place through views; the
-- returned tensor is new, and the host takes it back.
local nd = require "nd"
local image, verts = ...

-- Alpha to opaque, then brighten the left half's RGB by 2 (views: no copy).
image[{ {}, {}, 4 }]:fill_(1)
local left = image:narrow(2, 1, math.floor(image:size(2) / 2)):narrow(3, 1, 3)
left:mul_(2)

-- Rotate every vertex 90 degrees about z, straight into the host's array:
-- verts = verts @ R^T, through a temporary copy of the inputs, because
-- matmul's out may not overlap an operand.
local R = nd.tensor({ { 0, -1, 0 }, { 1, 0, 0 }, { 0, 0, 1 } }, "float32")
nd.matmul(verts:clone(), R:t(), verts)

-- Hand back the per-channel mean colour of the image (a fresh tensor).
return image:view(-1, 4):mean(1)
