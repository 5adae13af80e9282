# Run 81 aside: a shared-memory bank model of fused-pipe K = 10's passes (A-fragment 8-byte loads in
# 2 phases of 16 lanes, D-fragment 16-byte stores in 4 phases of 8), wavefronts per pass for a row
# stride W and a row permutation P of the m16n8 tile (instruction row g + 8x -> tile row P[g] + 8x).
# Prints the current layout, every pad, and the best (W, P) found by exhaustive search (minutes: 7 x 8! cases).
import itertools
K=10; K2=K*K
def wf8(addrs):   # 8-byte accesses, list of (lane, elem) ; 2 phases of 16 lanes
    tot=0
    for ph in range(2):
        groups={}
        for lane,e in addrs:
            if lane//16!=ph: continue
            groups.setdefault(e%16,set()).add(e)
        if groups: tot+=max(len(v) for v in groups.values())
    return tot
def wf16(addrs):  # 16-byte accesses at even elem e; 4 phases of 8 lanes
    tot=0
    for ph in range(4):
        groups={}
        for lane,e in addrs:
            if lane//8!=ph: continue
            groups.setdefault((e//2)%8,set()).add(e)
        if groups: tot+=max(len(v) for v in groups.values())
    return tot
def count(W, P):
    rows=lambda g,x: P[g]+8*x
    loads=stores=0
    tiles=(K2+15)//16
    for tile in range(tiles):
        i0=16*tile
        for ks in range(3):
            for x in range(2):
                acc=[]
                for lane in range(32):
                    g,t=lane>>2,lane&3
                    k=ks*4+t; i=i0+rows(g,x)
                    if k<K and i<K2: acc.append((lane,k*W+i))
                loads+=wf8(acc)
        for nf in range(2):
            for x in range(2):
                acc=[]
                for lane in range(32):
                    g,t=lane>>2,lane&3
                    i=i0+rows(g,x); j=nf*8+2*t
                    if i<K2 and j<K: acc.append((lane,(i//K)*W+(i%K)*K+j))
                stores+=wf16(acc)
    return loads,stores
ident=list(range(8))
for W in [100,102,104,106,108]:
    print(W, count(W,ident))
best=None
for W in [100,102,104,106,108,110,112]:
    for P in itertools.permutations(range(8)):
        l,s=count(W,P)
        if best is None or l+s<best[0]: best=(l+s,W,P,l,s)
print("best",best)
print("perm (g>>1)+4(g&1) W=100:", count(100,[ (g>>1)+4*(g&1) for g in range(8)]))
