"""CALIBRATION_TEXT: the text int8 quantization runs the fp32 model over to see each projection's input range.

SmoothQuant needs the per-channel maximum of each linear's input; the outlier channels that matter are a
property of the model, visible on any few hundred tokens. This mixes what verirag's models read: policy prose
with numbers and currencies, an instruction-style exchange, code, and Chinese. It was written for this purpose
and shares no sentence with kb/ or eval/, whose texts measure the result (bench/cpu_quant.py).
"""

CALIBRATION_TEXT = """\
Section 4. Equipment loans. Staff may borrow a laptop, a monitor or a headset for up to 30 days at a time.
A loan longer than 30 days needs the written approval of a department head, and no loan may exceed 180 days.
Lost equipment is reported to the service desk within 2 working days; the replacement cost (for example
USD 1,250 for a standard laptop, EUR 95 for a headset) is charged to the borrowing team's cost centre.

Question: How many days can a monitor be borrowed without approval?
Answer: A monitor can be borrowed for up to 30 days without approval [1].

Weather log, station 7: 2024-03-02 06:00 -4.5 C, wind 12 km/h NW, humidity 81 %; 12:00 3.2 C, wind
20 km/h W; 18:00 0.8 C. Monthly rainfall so far: 41.7 mm, 18 % below the ten-year average of 50.9 mm.

def moving_average(values: list[float], window: int = 3) -> list[float]:
    \"\"\"Mean of each run of `window` consecutive values.\"\"\"
    if window < 1:
        raise ValueError("window must be positive")
    return [sum(values[i:i + window]) / window for i in range(len(values) - window + 1)]

for row in moving_average([3.0, 4.5, 6.0, 7.5], window=2):
    print(f"{row:.2f}")

第三条 设备借用：员工可以借用笔记本电脑或显示器，每次最长三十天。超过三十天需要部门负责人书面批准，
任何借用不得超过一百八十天。设备遗失须在两个工作日内报告服务台，赔偿费用由借用团队承担。

The committee met on Tuesday to review the quarterly figures. Revenue rose 7.4 percent to 3.2 million,
while operating costs grew more slowly, by 2.1 percent. The members agreed to publish the summary next week
and asked the finance team to explain the one-off charge of 145,000 recorded in February.
<|user|> Summarise the meeting in one sentence. <|assistant|> Revenue grew faster than costs, and the summary
will be published next week once finance explains February's one-off charge.
"""
