"""The kernel DUT at 64 B, one-to-one against bidirectional, six rounds
interleaved (run.sh): each run's aggregate NDR and PDR and its cycles a
packet at 0.9-1.1x the NDR; per pattern the median and spread."""
import gzip,json,glob,os,statistics as st
d=os.path.dirname(os.path.abspath(__file__))
for p in ('one-to-one','bidirectional'):
    vals=[]
    for f in sorted(glob.glob(f'{d}/{p}-*.json.gz'), key=lambda x:int(x.rsplit('-',1)[1].split('.')[0])):
        j=json.load(gzip.open(f))
        for r in j['runs']:
            for t in r['tests']:
                g={x['goal']['name']:x for x in t['result']['goals']}
                n=g['ndr']['fps']; 
                cyc=[tr['outcome']['dut_stats']['cpu']['dut_cycles_per_packet'] for tr in t['trials'] if ((tr['outcome'].get('dut_stats') or {}).get('cpu') or {}).get('dut_cycles_per_packet') and 0.9*n<=tr['outcome']['offered_rate_fps']<=1.1*n]
                mult=2 if p=='bidirectional' else 1
                vals.append(n*mult)
                print(p, f.rsplit('-',1)[1].split('.')[0], 'ndr agg %.3f'%(n*mult/1e6), 'pdr agg %.3f'%(g['pdr']['fps']*mult/1e6), 'lb' if g['ndr'].get('lower_bound') else '', 'cyc %.0f'%st.median(cyc) if cyc else '', 'trials',len(t['trials']))
    if vals:
        m=st.median(vals); print(p,'median %.3f'%(m/1e6),'max dev %.1f%%'%(max(abs(v-m)/m for v in vals)*100), 'range %.1f%%'%((max(vals)/min(vals)-1)*100))
